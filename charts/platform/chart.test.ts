import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCommand, runKubectl } from '../../scripts/stack/kubernetes.ts';
import { until } from '../../test/harness/until.ts';

const CHART_DIR = fileURLToPath(new URL('.', import.meta.url));
const REPO_CRDS = fileURLToPath(new URL('../../crds/', import.meta.url));
/** Kept, not deleted: without a controller manager a deleted Namespace never finishes terminating. */
const NAMESPACE = 'svc-chart-test';
const RELEASE = 'svc';

/** Values every install must give; the rest are the chart's defaults. */
const REQUIRED_VALUES = {
  image: { repository: 'svc-platform', tag: '0.1.0' },
  postgresql: { existingSecret: { name: 'platform-postgresql', key: 'url' } },
  temporal: { address: 'temporal-frontend.temporal:7233' },
  identity: { issuer: 'https://login.example.com/tenant/v2.0', jwksUrl: 'https://login.example.com/tenant/discovery/v2.0/keys' },
};

type Json = Record<string, any>;

const workDir = mkdtempSync(join(tmpdir(), 'svc-chart-test-'));
let files = 0;
const kubectl = (args: string[], input?: string) => runKubectl(inject('kubectlPath'), inject('kubeconfigPath'), args, { input });

/** `helm template` of the chart with `values` (a values file) and extra arguments. */
function template(values: Json, args: string[] = []): Promise<string> {
  const file = join(workDir, `values-${(files += 1)}.json`);
  writeFileSync(file, JSON.stringify(values));
  return runCommand(inject('helmPath'), ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--values', file, ...args], {
    env: { ...process.env, HELM_CACHE_HOME: join(workDir, 'cache'), HELM_CONFIG_HOME: join(workDir, 'config'), HELM_DATA_HOME: join(workDir, 'data') },
  });
}

/** Why `helm template` refused `values`. */
async function refusal(values: Json): Promise<string> {
  try {
    await template(values);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`helm rendered the chart with ${JSON.stringify(values)}`);
}

/** Applies `manifests` as a server-side dry run and returns the objects as the API server would store them. */
async function dryRunApply(manifests: string): Promise<Json[]> {
  const out = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=svc-chart-test', '--force-conflicts', '-o', 'json', '-f', '-'], manifests);
  const parsed = JSON.parse(out) as Json;
  return parsed.kind === 'List' ? (parsed.items as Json[]) : [parsed];
}

function merge(base: Json, extra: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    out[key] = value && typeof value === 'object' && !Array.isArray(value) && typeof base[key] === 'object' ? merge(base[key], value) : value;
  }
  return out;
}

/**
 * Keys in values.yaml without a comment: every key, a parent such as `temporal:` too, needs a
 * comment right above it, or above a key it is nested in (a commented object value such as `resources`).
 */
function uncommentedValues(text: string): string[] {
  const lines = text.split('\n');
  const open: Array<{ indent: number; commented: boolean }> = [];
  const missing: string[] = [];
  lines.forEach((line, i) => {
    const key = /^(\s*)[A-Za-z][\w-]*:/.exec(line);
    if (!key) return;
    const indent = key[1]!.length;
    while (open.length > 0 && open.at(-1)!.indent >= indent) open.pop();
    const commented = /^\s*#/.test(lines[i - 1] ?? '');
    if (!commented && !open.some((o) => o.commented)) missing.push(line.trim());
    open.push({ indent, commented });
  });
  return missing;
}

beforeAll(async () => {
  await kubectl(['apply', '--server-side', '--field-manager=svc-chart-test', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }));
});

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('Helm chart charts/platform', () => {
  let objects: Json[] = [];
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

  it('renders every component, and the API server accepts every manifest (server-side dry run)', async () => {
    const rendered = await template(REQUIRED_VALUES, ['--include-crds']);
    objects = await dryRunApply(rendered);
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(names).toEqual(
      [
        'ClusterRole/svc-platform-operator',
        'ClusterRoleBinding/svc-platform-operator',
        'CustomResourceDefinition/apps.platform.svc.dev',
        'CustomResourceDefinition/tenants.platform.svc.dev',
        'Deployment/svc-platform-control-plane',
        'Deployment/svc-platform-edge',
        'Deployment/svc-platform-operator',
        'Deployment/svc-platform-worker',
        'NetworkPolicy/svc-platform-control-plane',
        'NetworkPolicy/svc-platform-edge',
        'NetworkPolicy/svc-platform-operator',
        'NetworkPolicy/svc-platform-worker',
        'PodDisruptionBudget/svc-platform-control-plane',
        'PodDisruptionBudget/svc-platform-edge',
        'PodDisruptionBudget/svc-platform-operator',
        'PodDisruptionBudget/svc-platform-worker',
        'Role/svc-platform-operator',
        'RoleBinding/svc-platform-operator',
        'Secret/svc-platform-control-plane-secrets-key',
        'Secret/svc-platform-control-plane-token',
        'Secret/svc-platform-edge-sign-in',
        'Service/svc-platform-control-plane',
        'Service/svc-platform-edge',
        'ServiceAccount/svc-platform-operator',
        'ServiceAccount/svc-platform-workload',
      ].sort(),
    );
    for (const o of objects.filter((o) => o.metadata.namespace !== undefined)) expect(o.metadata.namespace).toBe(NAMESPACE);
  });

  it('runs one image with a role argument per Deployment, with probes, resources and the PostgreSQL URL from a Secret', () => {
    // Liveness never asks the database (an outage must not restart every pod); readiness does.
    const readyPaths: Record<string, string | undefined> = { edge: '/health/ready', 'control-plane': '/health/ready', worker: '/health', operator: '/health' };
    for (const role of ['edge', 'control-plane', 'worker', 'operator']) {
      const deployment = find('Deployment', `svc-platform-${role}`)!;
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(container.image).toBe('svc-platform:0.1.0');
      expect(container.args).toEqual(['--role', role]);
      // The image's entrypoint (Node) for every role but the edge, which Bun serves.
      expect(container.command).toEqual(role === 'edge' ? ['/app/node_modules/.bin/bun', 'main.ts'] : undefined);
      expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container.resources.limits.memory).toEqual(expect.any(String));
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      const env = Object.fromEntries(container.env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
      expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'platform-postgresql', key: 'url' } });
      expect(container.readinessProbe?.httpGet?.path).toBe(readyPaths[role]);
      expect(container.livenessProbe?.httpGet?.path).toBe('/health/live');
      expect(container.startupProbe?.httpGet?.path).toBe('/health/live');
      expect(env).toMatchObject({ DB_CONNECT_TIMEOUT_SECONDS: '5', DB_STATEMENT_TIMEOUT_MS: '30000', DB_IDLE_TIMEOUT_SECONDS: '60', DB_ACQUIRE_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_SECONDS: '25' });
      const pdb = find('PodDisruptionBudget', `svc-platform-${role}`)!;
      expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      expect(pod.automountServiceAccountToken ?? true).toBe(role === 'operator');
    }
    const edgeEnv = Object.fromEntries(find('Deployment', 'svc-platform-edge')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value]));
    expect(edgeEnv).toMatchObject({
      CONTROL_PLANE_URL: 'http://svc-platform-control-plane:8081',
      AUTH_ISSUER: REQUIRED_VALUES.identity.issuer,
      AUTH_JWKS_URL: REQUIRED_VALUES.identity.jwksUrl,
      AUTH_AUDIENCE: 'urn:svc:api',
    });
    const workerEnv = Object.fromEntries(find('Deployment', 'svc-platform-worker')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value]));
    expect(workerEnv).toMatchObject({ TEMPORAL_ADDRESS: 'temporal-frontend.temporal:7233', TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: 'svc-platform' });
    expect(workerEnv.QDRANT_URL).toBeUndefined();
    const operatorEnv = Object.fromEntries(find('Deployment', 'svc-platform-operator')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
    // Tenants' connection Secrets name the edge the way clients reach it.
    expect(edgeEnv.PUBLIC_URL).toBe(`http://svc-platform-edge.${NAMESPACE}.svc:80`);
    expect(operatorEnv.PUBLIC_URL).toBe(edgeEnv.PUBLIC_URL);
    expect(operatorEnv).toMatchObject({
      OPERATOR_NAMESPACE: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
      OPERATOR_LEASE_NAME: 'svc-platform-operator',
      TEMPORAL_ADDRESS: 'temporal-frontend.temporal:7233',
    });
    // Time to finish running work before the kill: reconciles and the Lease release, activities.
    const grace = (role: string) => find('Deployment', `svc-platform-${role}`)!.spec.template.spec.terminationGracePeriodSeconds;
    expect(grace('operator')).toBe(45);
    expect(grace('worker')).toBe(60);
    // The edge and control plane serve while they leave the endpoints (preStop), then drain for
    // SHUTDOWN_GRACE_SECONDS: the kill comes only after both.
    for (const role of ['edge', 'control-plane']) {
      const [container] = find('Deployment', `svc-platform-${role}`)!.spec.template.spec.containers;
      const drain = Number(container.env.find((e: Json) => e.name === 'SHUTDOWN_GRACE_SECONDS').value);
      expect(container.lifecycle.preStop).toEqual({ sleep: { seconds: 5 } });
      expect(grace(role)).toBeGreaterThan(container.lifecycle.preStop.sleep.seconds + drain);
    }
  });

  it('takes the shutdown grace and database timeouts from values, and refuses malformed ones', async () => {
    const values = merge(REQUIRED_VALUES, { shutdown: { preStopSleepSeconds: 10, graceSeconds: 60 }, postgresql: { timeouts: { statementMs: 0 } } });
    const applied = await dryRunApply(await template(values));
    const edge = applied.find((o) => o.kind === 'Deployment' && o.metadata.name === 'svc-platform-edge')!.spec.template.spec;
    const env = Object.fromEntries(edge.containers[0].env.map((e: Json) => [e.name, e.value]));
    expect(env).toMatchObject({ SHUTDOWN_GRACE_SECONDS: '60', DB_STATEMENT_TIMEOUT_MS: '0' });
    expect(edge.containers[0].lifecycle.preStop.sleep.seconds).toBe(10);
    expect(edge.terminationGracePeriodSeconds).toBe(75);
    expect(await refusal(merge(REQUIRED_VALUES, { shutdown: { graceSeconds: -1 } }))).toMatch(/\/shutdown\/graceSeconds/);
  });

  it('takes the Qdrant URL and key, a chart-made PostgreSQL Secret, and can leave components out', async () => {
    const values = merge(REQUIRED_VALUES, {
      postgresql: { existingSecret: { name: '' }, url: 'postgres://svc:secret@db:5432/svc' },
      qdrant: { url: 'http://qdrant:6333', apiKeySecret: { name: 'qdrant', key: 'api-key' } },
      operator: { enabled: false },
      worker: { enabled: false },
    });
    const applied = await dryRunApply(await template(values));
    const kinds = applied.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toContain('Secret/svc-platform-postgresql');
    expect(kinds.filter((k) => /operator|worker/.test(k))).toEqual([]);
    const env = Object.fromEntries(
      applied.find((o) => o.metadata.name === 'svc-platform-control-plane' && o.kind === 'Deployment')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]),
    );
    expect(env.TENANT_DATABASE_URL).toBeUndefined();
    expect(env).toMatchObject({
      QDRANT_URL: 'http://qdrant:6333',
      QDRANT_API_KEY: { secretKeyRef: { name: 'qdrant', key: 'api-key' } },
      DATABASE_URL: { secretKeyRef: { name: 'svc-platform-postgresql', key: 'url' } },
    });
  });

  it('gives every component the tenant connections\u2019 own login from a Secret, when one is named', async () => {
    const applied = await dryRunApply(await template(merge(REQUIRED_VALUES, { postgresql: { tenantLogin: { existingSecret: { name: 'platform-tenant-login' } } } })));
    for (const role of ['edge', 'control-plane', 'worker', 'operator']) {
      const deployment = applied.find((o) => o.kind === 'Deployment' && o.metadata.name === `svc-platform-${role}`)!;
      const env = Object.fromEntries(deployment.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
      expect(env.TENANT_DATABASE_URL, role).toEqual({ secretKeyRef: { name: 'platform-tenant-login', key: 'url' } });
    }
  });

  it('gives every edge pod one sign-in key and the backend-for-frontend client, from Secrets', async () => {
    const edgeEnv = (applied: Json[]) =>
      Object.fromEntries(applied.find((o) => o.kind === 'Deployment' && o.metadata.name === 'svc-platform-edge')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
    // By default the chart keeps a Secret of its own: 32 random bytes, base64.
    expect(edgeEnv(objects)).toMatchObject({
      SIGN_IN_KEY: { secretKeyRef: { name: 'svc-platform-edge-sign-in', key: 'key' } },
      BFF_CLIENT_ID: 'svc-bff',
      BFF_SCOPE: 'openid email profile api',
      // Behind an ingress, clients are told apart by the X-Forwarded-For of the cluster's proxies.
      TRUSTED_PROXIES: '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7',
    });
    expect(edgeEnv(objects).BFF_CLIENT_SECRET).toBeUndefined();
    const key = Buffer.from(Buffer.from(find('Secret', 'svc-platform-edge-sign-in')!.data.key, 'base64').toString(), 'base64');
    expect(key).toHaveLength(32);

    const given = await dryRunApply(
      await template(
        merge(REQUIRED_VALUES, {
          edge: { signInKey: { existingSecret: { name: 'edge-keys', key: 'sign-in' } } },
          identity: { bff: { clientId: 'portal', scope: 'openid api', clientSecret: { name: 'portal-client', key: 'secret' } } },
        }),
      ),
    );
    expect(given.map((o) => `${o.kind}/${o.metadata.name}`)).not.toContain('Secret/svc-platform-edge-sign-in');
    expect(edgeEnv(given)).toMatchObject({
      SIGN_IN_KEY: { secretKeyRef: { name: 'edge-keys', key: 'sign-in' } },
      BFF_CLIENT_ID: 'portal',
      BFF_SCOPE: 'openid api',
      BFF_CLIENT_SECRET: { secretKeyRef: { name: 'portal-client', key: 'secret' } },
    });
  });

  it("names the platform's own clients and refuses tokens naming no client, by default", async () => {
    const envOf = (applied: Json[], role: string) =>
      Object.fromEntries(applied.find((o) => o.kind === 'Deployment' && o.metadata.name === `svc-platform-${role}`)!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
    for (const role of ['edge', 'control-plane']) {
      expect(envOf(objects, role), role).toMatchObject({ AUTH_FIRST_PARTY_CLIENTS: 'svc-cli,svc-bff', AUTH_TOKENS_WITHOUT_CLIENT: 'refuse' });
    }
    const given = await dryRunApply(
      await template(merge(REQUIRED_VALUES, { identity: { firstPartyClients: ['cli', 'portal'], tokensWithoutClient: 'first-party', bff: { clientId: 'portal' } } })),
    );
    expect(envOf(given, 'control-plane')).toMatchObject({ AUTH_FIRST_PARTY_CLIENTS: 'cli,portal', AUTH_TOKENS_WITHOUT_CLIENT: 'first-party' });
    expect(await refusal(merge(REQUIRED_VALUES, { identity: { tokensWithoutClient: 'allow' } }))).toMatch(/tokensWithoutClient/);
  });

  it('gives every control-plane pod one secrets key, from a Secret kept on uninstall or from the one given', async () => {
    const controlPlaneEnv = (applied: Json[]) =>
      Object.fromEntries(applied.find((o) => o.kind === 'Deployment' && o.metadata.name === 'svc-platform-control-plane')!.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]));
    expect(controlPlaneEnv(objects).SECRETS_KEY).toEqual({ secretKeyRef: { name: 'svc-platform-control-plane-secrets-key', key: 'key' } });
    const secret = find('Secret', 'svc-platform-control-plane-secrets-key')!;
    expect(secret.metadata.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
    expect(Buffer.from(Buffer.from(secret.data.key, 'base64').toString(), 'base64')).toHaveLength(32);

    const given = await dryRunApply(await template(merge(REQUIRED_VALUES, { controlPlane: { secretsKey: { existingSecret: { name: 'platform-keys', key: 'secrets' } } } })));
    expect(given.map((o) => `${o.kind}/${o.metadata.name}`)).not.toContain('Secret/svc-platform-control-plane-secrets-key');
    expect(controlPlaneEnv(given).SECRETS_KEY).toEqual({ secretKeyRef: { name: 'platform-keys', key: 'secrets' } });
  });

  it('gives the edge and the control plane one credential for the control plane\u2019s port, from a Secret', async () => {
    const tokenEnv = (applied: Json[], role: string) =>
      applied
        .find((o) => o.kind === 'Deployment' && o.metadata.name === `svc-platform-${role}`)!
        .spec.template.spec.containers[0].env.find((e: Json) => e.name === 'CONTROL_PLANE_TOKEN')?.valueFrom;
    for (const role of ['edge', 'control-plane']) expect(tokenEnv(objects, role), role).toEqual({ secretKeyRef: { name: 'svc-platform-control-plane-token', key: 'token' } });
    // The workers and the operator call no control plane: they run its services themselves.
    for (const role of ['worker', 'operator']) expect(tokenEnv(objects, role), role).toBeUndefined();
    // By default the chart keeps a Secret of its own: 32 random bytes, base64 (44 characters).
    const token = Buffer.from(find('Secret', 'svc-platform-control-plane-token')!.data.token, 'base64').toString();
    expect(token).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(token, 'base64')).toHaveLength(32);

    const given = await dryRunApply(await template(merge(REQUIRED_VALUES, { controlPlane: { token: { existingSecret: { name: 'platform-internal', key: 'control-plane' } } } })));
    expect(given.map((o) => `${o.kind}/${o.metadata.name}`)).not.toContain('Secret/svc-platform-control-plane-token');
    for (const role of ['edge', 'control-plane']) expect(tokenEnv(given, role), role).toEqual({ secretKeyRef: { name: 'platform-internal', key: 'control-plane' } });
  });

  it('lets only the edge reach the control plane\u2019s port, and each component only on its own ports (NetworkPolicies)', async () => {
    const policy = (applied: Json[], role: string) => applied.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === `svc-platform-${role}`)!;
    const podLabels = (role: string) => find('Deployment', `svc-platform-${role}`)!.spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Json, labels: Record<string, string>) => Object.entries(selector.matchLabels as Record<string, string>).every(([key, value]) => labels[key] === value);
    const portNames = (role: string) => find('Deployment', `svc-platform-${role}`)!.spec.template.spec.containers[0].ports.map((p: Json) => p.name);
    const roles = ['edge', 'control-plane', 'worker', 'operator'];
    for (const role of roles) {
      const { spec } = policy(objects, role);
      // Ingress only: DNS, PostgreSQL, Temporal and the identity provider stay reachable.
      expect(spec.policyTypes, role).toEqual(['Ingress']);
      expect(spec.egress, role).toBeUndefined();
      for (const other of roles) expect(selects(spec.podSelector, podLabels(other)), `${role} policy selects ${other} pods`).toBe(other === role);
      // Every port a rule opens is one the container names.
      for (const rule of spec.ingress) for (const port of rule.ports) expect(portNames(role), role).toContain(port.port);
    }
    const rules = (role: string, applied = objects) => Object.fromEntries(policy(applied, role).spec.ingress.map((rule: Json) => [rule.ports.map((p: Json) => p.port).join(','), rule.from]));
    const controlPlane = rules('control-plane');
    expect(Object.keys(controlPlane).sort()).toEqual(['http', 'metrics']);
    expect(controlPlane.http).toHaveLength(1);
    for (const other of roles) expect(selects(controlPlane.http[0].podSelector, podLabels(other)), `control-plane port admits ${other} pods`).toBe(other === 'edge');
    expect(controlPlane.http[0].namespaceSelector).toBeUndefined();
    expect(rules('edge')).toEqual({ http: undefined, metrics: undefined });
    expect(rules('worker')).toEqual({ metrics: undefined });
    expect(rules('operator')).toEqual({ metrics: undefined });

    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const ingress = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
    const batch = { podSelector: { matchLabels: { app: 'nightly-import' } } };
    const narrowed = await dryRunApply(await template(merge(REQUIRED_VALUES, { networkPolicy: { metricsFrom: [monitoring], edgeFrom: [ingress], controlPlaneExtraFrom: [batch] } })));
    expect(rules('edge', narrowed)).toEqual({ http: [ingress], metrics: [monitoring] });
    expect(rules('worker', narrowed)).toEqual({ metrics: [monitoring] });
    expect(rules('control-plane', narrowed)).toEqual({ http: [controlPlane.http[0], batch], metrics: [monitoring] });

    const off = await dryRunApply(await template(merge(REQUIRED_VALUES, { networkPolicy: { enabled: false } })));
    expect(off.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
    expect(await refusal(merge(REQUIRED_VALUES, { networkPolicy: { enabled: 'yes' } }))).toMatch(/\/networkPolicy\/enabled[\s\S]*got string, want boolean/);
    expect(await refusal(merge(REQUIRED_VALUES, { networkPolicy: { metricsFrom: 'monitoring' } }))).toMatch(/\/networkPolicy\/metricsFrom[\s\S]*got string, want array/);
  });

  it('gives the operator least privilege: what it reconciles, and nothing else', async () => {
    const rbac = objects.filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
    const manifests = rbac.map((o) => {
      const { metadata, ...rest } = o;
      return { ...rest, metadata: { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}), labels: metadata.labels } };
    });
    await kubectl(['apply', '--server-side', '--field-manager=svc-chart-test', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
    const operator = `system:serviceaccount:${NAMESPACE}:svc-platform-operator`;
    const can = async (...args: string[]) =>
      (await kubectl(['auth', 'can-i', '--as', operator, ...args]).catch((error: { stdout?: string }) => error.stdout ?? '')).trim();
    const allowed = [
      ['watch', 'tenants.platform.svc.dev'],
      ['patch', 'apps.platform.svc.dev'],
      ['patch', 'tenants.platform.svc.dev', '--subresource=status'],
      ['update', 'tenants.platform.svc.dev', '--subresource=finalizers'],
      ['create', 'namespaces'],
      ['create', 'secrets', '-n', 'tenant-acme'],
      ['get', 'secrets', '-n', 'tenant-acme'],
      ['create', 'events', '-n', 'default'],
      ['create', 'leases.coordination.k8s.io', '-n', NAMESPACE],
      ['update', 'leases.coordination.k8s.io/svc-platform-operator', '-n', NAMESPACE],
    ];
    const denied = [
      ['delete', 'tenants.platform.svc.dev'],
      ['update', 'apps.platform.svc.dev'],
      ['update', 'tenants.platform.svc.dev', '--subresource=status'],
      ['delete', 'namespaces'],
      // Cluster-wide changes to Namespaces would let it relabel any (pod security labels included).
      ['patch', 'namespaces'],
      ['update', 'namespaces'],
      ['get', 'namespaces'],
      ['patch', 'secrets', '-n', 'tenant-acme'],
      ['patch', 'events', '-n', 'default'],
      ['patch', 'leases.coordination.k8s.io/svc-platform-operator', '-n', NAMESPACE],
      ['list', 'secrets', '-n', 'tenant-acme'],
      ['watch', 'secrets', '-n', 'tenant-acme'],
      ['create', 'deployments.apps', '-n', NAMESPACE],
      ['update', 'leases.coordination.k8s.io/another-lease', '-n', NAMESPACE],
      ['create', 'leases.coordination.k8s.io', '-n', 'default'],
      ['create', 'clusterrolebindings'],
      ['get', 'configmaps', '-n', NAMESPACE],
      ['create', 'events.events.k8s.io', '-n', 'default'],
    ];
    // The API server's authorizer reads roles and bindings from a cache that follows the apply.
    await until(() => Promise.all(allowed.map((args) => can(...args))), (answers) => answers.every((answer) => answer === 'yes'), 15_000).catch(() => {});
    for (const args of allowed) expect(await can(...args), args.join(' ')).toBe('yes');
    for (const args of denied) expect(await can(...args), args.join(' ')).toBe('no');
    const workload = `system:serviceaccount:${NAMESPACE}:svc-platform-workload`;
    expect((await kubectl(['auth', 'can-i', '--as', workload, '--list', '-n', NAMESPACE])).match(/platform\.svc\.dev|secrets|leases/)).toBeNull();
  });

  it('installs the CRDs that crds/ links to (one copy, in the chart)', async () => {
    const files = readdirSync(REPO_CRDS).filter((f) => f.endsWith('.yaml'));
    expect(files.sort()).toEqual(readdirSync(join(CHART_DIR, 'crds')).sort());
    for (const file of files) expect(realpathSync(join(REPO_CRDS, file))).toBe(join(realpathSync(CHART_DIR), 'crds', file));
    const crd = objects.find((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'tenants.platform.svc.dev')!;
    expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.homeRegion.enum).toEqual(['au', 'ca', 'eu']);
  });

  it('rejects values that values.schema.json does not admit', async () => {
    expect(await refusal(merge(REQUIRED_VALUES, { edge: { replicas: 'two' } }))).toMatch(/values don't meet the specifications of the schema[\s\S]*\/edge\/replicas[\s\S]*got string, want integer/);
    expect(await refusal(merge(REQUIRED_VALUES, { edge: { replica: 2 } }))).toMatch(/\/edge[\s\S]*additional properties 'replica' not allowed/);
    expect(await refusal(merge(REQUIRED_VALUES, { image: { pullPolicy: 'Sometimes' } }))).toMatch(/\/image\/pullPolicy[\s\S]*value must be one of 'Always', 'IfNotPresent', 'Never'/);
    expect(await refusal(merge(REQUIRED_VALUES, { temporal: { address: 'http://temporal' } }))).toMatch(/\/temporal\/address[\s\S]*does not match pattern/);
    expect(await refusal(merge(REQUIRED_VALUES, { operator: { pdb: { maxUnavailable: '50 percent' } } }))).toMatch(/\/operator\/pdb\/maxUnavailable/);
    // As a subchart it receives its parent's `global` values.
    expect((await template(merge(REQUIRED_VALUES, { global: { storageClass: 'fast' } }))).length).toBeGreaterThan(0);
  });

  it('names what is missing, and fails clearly on removed keys', async () => {
    const without = (path: string[]) => {
      const copy = JSON.parse(JSON.stringify(REQUIRED_VALUES)) as Json;
      let node = copy;
      for (const key of path.slice(0, -1)) node = node[key];
      delete node[path.at(-1)!];
      return copy;
    };
    expect(await refusal(without(['temporal', 'address']))).toMatch(/temporal\.address is required: the Temporal frontend \(host:port\)/);
    expect(await refusal(without(['identity', 'issuer']))).toMatch(/identity\.issuer is required/);
    expect(await refusal(without(['image', 'repository']))).toMatch(/image\.repository is required/);
    expect(await refusal(without(['postgresql', 'existingSecret']))).toMatch(/postgresql\.existingSecret\.name is required/);
    expect(await refusal(merge(REQUIRED_VALUES, { workers: { replicas: 3 } }))).toMatch(/the value "workers" was removed from this chart; use worker/);
    expect(await refusal(merge(REQUIRED_VALUES, { databaseUrl: 'postgres://db/svc' }))).toMatch(/the value "databaseUrl" was removed from this chart; use postgresql\.existingSecret/);
  });

  it('serves /metrics on a port of its own in every component, and renders a ServiceMonitor when asked', async () => {
    for (const role of ['edge', 'control-plane', 'worker', 'operator']) {
      const [container] = find('Deployment', `svc-platform-${role}`)!.spec.template.spec.containers;
      expect(container.ports, role).toContainEqual(expect.objectContaining({ name: 'metrics', containerPort: 9464 }));
      expect(container.env, role).toContainEqual({ name: 'METRICS_PORT', value: '9464' });
    }
    // The edge's Service may be public: /metrics is never on it.
    expect(find('Service', 'svc-platform-edge')!.spec.ports.map((p: Json) => p.name)).toEqual(['http']);
    expect(objects.some((o) => o.kind === 'ServiceMonitor')).toBe(false);

    // The prometheus-operator's kind, as far as the API server needs to know it for a dry run.
    const serviceMonitorCrd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'servicemonitors.monitoring.coreos.com' },
      spec: {
        group: 'monitoring.coreos.com',
        names: { kind: 'ServiceMonitor', plural: 'servicemonitors', singular: 'servicemonitor', listKind: 'ServiceMonitorList' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    await kubectl(['apply', '--server-side', '--field-manager=svc-chart-test', '-f', '-'], JSON.stringify(serviceMonitorCrd));
    await until(() => kubectl(['get', 'crd', 'servicemonitors.monitoring.coreos.com', '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']), (s) => s === 'True', 15_000);
    const values = merge(REQUIRED_VALUES, { metrics: { port: 9100, serviceMonitor: { enabled: true, interval: '30s', labels: { release: 'prometheus' } } } });
    const rendered = await template(values);
    // kubectl learns of the new kind from discovery, which may lag the CRD by a moment.
    await until(() => dryRunApply(rendered).then(() => true, () => false), (ok) => ok, 30_000).catch(() => {});
    const monitored = await dryRunApply(rendered);
    const monitor = monitored.find((o) => o.kind === 'ServiceMonitor')!;
    expect(monitor.metadata).toMatchObject({ name: 'svc-platform', namespace: NAMESPACE, labels: { release: 'prometheus' } });
    expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
    const selected = monitored.filter(
      (o) => o.kind === 'Service' && Object.entries(monitor.spec.selector.matchLabels).every(([key, value]) => o.metadata.labels?.[key] === value),
    );
    expect(selected.map((o) => o.metadata.name).sort()).toEqual(['control-plane', 'edge', 'operator', 'worker'].map((c) => `svc-platform-${c}-metrics`));
    for (const service of selected) {
      expect(service.spec.type).toBe('ClusterIP');
      expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'metrics', port: 9100, targetPort: 'metrics' })]);
    }
    const worker = monitored.find((o) => o.kind === 'Deployment' && o.metadata.name === 'svc-platform-worker')!;
    expect(worker.spec.template.spec.containers[0].ports).toContainEqual(expect.objectContaining({ name: 'metrics', containerPort: 9100 }));
    expect(await refusal(merge(REQUIRED_VALUES, { metrics: { serviceMonitor: { interval: 'often' } } }))).toMatch(/\/metrics\/serviceMonitor\/interval[\s\S]*does not match pattern/);
  });

  it('passes helm lint --strict, and comments every value', async () => {
    const file = join(workDir, 'lint-values.json');
    writeFileSync(file, JSON.stringify(REQUIRED_VALUES));
    const lint = await runCommand(inject('helmPath'), ['lint', '--strict', CHART_DIR, '--values', file]);
    expect(lint).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);

    expect(uncommentedValues(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'))).toEqual([]);
  });
});
