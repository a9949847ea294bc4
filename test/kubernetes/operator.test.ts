import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Watch } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GROUP, loadKubeConfig, VERSION } from '../../control-plane/operator/kube.ts';
import { runCommand, runKubectl } from '../../scripts/stack/kubernetes.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { startPlatform, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { runStatuses } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

const CRDS_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));
const CHART_DIR = fileURLToPath(new URL('../../charts/platform/', import.meta.url));
const kubectl = (args: string[], input?: unknown) =>
  runKubectl(inject('kubectlPath'), inject('kubeconfigPath'), args, { input: input === undefined ? undefined : JSON.stringify(input) });
const getTenant = async (name: string) => JSON.parse(await kubectl(['get', 'tenant', name, '-o', 'json']));

const tenantObject = (slug: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: slug },
  spec: { name: `Operator ${slug}`, slug, homeRegion: 'eu', domains: [`${slug}.example`], ...spec },
});

const readyCondition = (object: any) => object?.status?.conditions?.find((c: any) => c.type === 'Ready');

/**
 * Installs the chart's operator ServiceAccount and RBAC (release `optest`) in `namespace`, and
 * writes a kubeconfig that acts as that ServiceAccount with a token the API server issued.
 */
async function chartOperatorKubeconfig(namespace: string, dir: string): Promise<string> {
  const helmHome = join(dir, 'helm');
  const values = ['image.repository=svc-platform', 'postgresql.existingSecret.name=platform-postgresql', 'temporal.address=temporal:7233', 'identity.issuer=https://login.example', 'identity.jwksUrl=https://login.example/keys'];
  const templates = ['operator-serviceaccount', 'operator-clusterrole', 'operator-clusterrolebinding', 'operator-role', 'operator-rolebinding'];
  const manifests = await runCommand(
    inject('helmPath'),
    ['template', 'optest', CHART_DIR, '--namespace', namespace, ...values.flatMap((v) => ['--set', v]), ...templates.flatMap((t) => ['--show-only', `templates/${t}.yaml`])],
    { env: { ...process.env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome } },
  );
  await runKubectl(inject('kubectlPath'), inject('kubeconfigPath'), ['apply', '--server-side', '--field-manager=svc-operator-test', '-f', '-'], { input: manifests });
  const account = 'optest-platform-operator';
  const user = `system:serviceaccount:${namespace}:${account}`;
  // The authorizer reads roles and bindings from a cache that follows the apply.
  await until(() => kubectl(['auth', 'can-i', '--as', user, 'create', 'namespaces']).catch(() => 'no'), (answer) => answer.trim() === 'yes', 15_000);
  const token = (await kubectl(['create', 'token', account, '-n', namespace, '--duration=1h'])).trim();
  const admin = JSON.parse(await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json']));
  const path = join(dir, 'operator-kubeconfig.json');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: admin.clusters[0].cluster }],
      users: [{ name: account, user: { token } }],
      contexts: [{ name: 'operator', context: { cluster: 'test', user: account } }],
      'current-context': 'operator',
    }),
  );
  return path;
}

/**
 * Watches one object and resolves, once it is gone, with the phase and Ready reason of each
 * version seen: the steps of its deletion, as a client watching it sees them.
 */
async function statusesUntilGone(plural: string, name: string): Promise<{ seen: Promise<string[]>; stop(): void }> {
  const seen: string[] = [];
  let gone!: (value: string[]) => void;
  const done = new Promise<string[]>((resolve) => (gone = resolve));
  const controller = await new Watch(loadKubeConfig(inject('kubeconfigPath'))).watch(
    `/apis/${GROUP}/${VERSION}/${plural}`,
    { fieldSelector: `metadata.name=${name}` },
    (phase, object: any) => {
      if (phase === 'DELETED') return gone(seen);
      const status = `${object.status?.phase}/${readyCondition(object)?.reason}`;
      if (seen[seen.length - 1] !== status) seen.push(status);
    },
    () => {},
  );
  return { seen: done, stop: () => controller.abort() };
}

const appObject = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'platform.svc.dev/v1alpha1', kind: 'App', metadata: { name }, spec });
const getApp = async (name: string) => JSON.parse(await kubectl(['get', 'app', name, '-o', 'json']));

describe('Tenant and App operator on a real Kubernetes API server', () => {
  let stack: TestStack;
  const operators: RunningPlatform[] = [];
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const leaseNamespace = `operator-test-${randomUUID().slice(0, 8)}`;

  /** An operator process of this suite; `on` points it at another Temporal server or kubeconfig. */
  const startOperatorProcess = (identity: string, on: { temporal?: TestStack['temporal']; kubeconfigPath?: string } = {}) =>
    startPlatform({
      role: 'operator',
      databaseUrl: inject('databaseUrl'),
      tenantDatabaseUrl: inject('tenantDatabaseUrl'),
      port: 0,
      publicUrl: stack.url,
      temporal: on.temporal ?? stack.temporal,
      operator: { kubeconfigPath: on.kubeconfigPath ?? inject('kubeconfigPath'), namespace: leaseNamespace, identity },
      healthPort: 0,
    });
  const health = async (operator: RunningPlatform) => {
    const response = await fetch(`${operator.url}/health`);
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=svc-operator-test', '-f', CRDS_DIR]);
    await kubectl(['create', 'namespace', leaseNamespace]);
    stack = await startTestStack();
    operators.push(await startOperatorProcess('replica-a'));
  }, 180_000);
  afterAll(async () => {
    for (const operator of operators) await operator.close();
    await stack?.close();
    await sql.end();
  }, 180_000);

  it('provisions a Tenant to Ready, with its Namespace, connection Secret, status and Events', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const tenant = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    expect(tenant.status).toMatchObject({ phase: 'Ready', observedGeneration: 1, namespace: `tenant-${slug}`, secretName: 'tenant-connection', homeRegion: 'eu' });
    expect(tenant.status.provisioningWorkflowId).toBe(`tenant-${tenant.status.tenantId}-provision`);
    expect(tenant.metadata.finalizers).toContain('platform.svc.dev/tenant-cleanup');
    const types = tenant.status.conditions.map((c: any) => `${c.type}=${c.status}`);
    expect(types).toEqual(expect.arrayContaining(['Ready=True', 'Degraded=False', 'PostgresqlStorageProvisioned=True', 'BlobStorageProvisioned=True']));

    const secret = JSON.parse(await kubectl(['get', 'secret', 'tenant-connection', '-n', `tenant-${slug}`, '-o', 'json']));
    expect(Buffer.from(secret.data.TENANT_ID, 'base64').toString()).toBe(tenant.status.tenantId);
    const [row] = await sql<{ status: string; slug: string }[]>`select status, slug from tenants where id = ${tenant.status.tenantId}::uuid`;
    expect(row).toEqual({ status: 'active', slug });
    const reasons = () => kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${slug}`, '-o', 'json']).then((out) => JSON.parse(out).items.map((e: any) => e.reason));
    expect(await until(reasons, (r: string[]) => r.includes('Provisioned'), 10_000)).toEqual(expect.arrayContaining(['Provisioning', 'Provisioned']));
  }, 180_000);

  it('provisions the storage backends a Tenant declares, and one declared later', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(slug, { storageBackends: ['postgresql', 'mongodb'] }));
    const ready = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    expect(ready.status.storage).toEqual([
      { backend: 'postgresql', status: 'ready' },
      { backend: 'documentdb', status: 'ready' },
    ]);
    expect(ready.status.conditions.map((c: any) => c.type).filter((t: string) => t.endsWith('StorageProvisioned'))).toEqual([
      'PostgresqlStorageProvisioned',
      'DocumentdbStorageProvisioned',
    ]);
    const backendsOf = async () =>
      (await sql<{ backend: string; status: string }[]>`select backend, status from tenant_storage where tenant_id = ${ready.status.tenantId}::uuid order by backend`).map(
        (r) => `${r.backend}:${r.status}`,
      );
    expect(await backendsOf()).toEqual(['documentdb:ready', 'postgresql:ready']);
    const secret = JSON.parse(await kubectl(['get', 'secret', 'tenant-connection', '-n', `tenant-${slug}`, '-o', 'json']));
    expect(Object.keys(secret.data).filter((k) => k.startsWith('STORAGE_')).sort()).toEqual(['STORAGE_DOCUMENTDB', 'STORAGE_POSTGRESQL']);

    // Declaring every backend provisions the two missing ones through the storage workflow.
    await kubectl(['patch', 'tenant', slug, '--type', 'merge', '-p', JSON.stringify({ spec: { storageBackends: ['all'] } })]);
    const all = await until(
      () => getTenant(slug),
      (t) => t.status?.observedGeneration === 2 && readyCondition(t)?.status === 'True' && t.status.storage.length === 4,
    );
    expect(all.status.storage.map((b: any) => `${b.backend}:${b.status}`)).toEqual(['postgresql:ready', 'documentdb:ready', 'blob:ready', 'search:ready']);
    expect(await backendsOf()).toEqual(['blob:ready', 'documentdb:ready', 'postgresql:ready', 'search:ready']);
    const updated = JSON.parse(await kubectl(['get', 'secret', 'tenant-connection', '-n', `tenant-${slug}`, '-o', 'json']));
    expect(Object.keys(updated.data).filter((k) => k.startsWith('STORAGE_')).sort()).toEqual(['STORAGE_BLOB', 'STORAGE_DOCUMENTDB', 'STORAGE_POSTGRESQL', 'STORAGE_SEARCH']);
  }, 180_000);

  it('reconciles spec changes and soft-deletes the tenant through the finalizer', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const ready = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    await kubectl(['patch', 'tenant', slug, '--type', 'merge', '-p', JSON.stringify({ spec: { name: 'Renamed by spec', industry: 'logistics' } })]);
    await until(
      () => sql<{ name: string; industry: string }[]>`select name, industry from tenants where id = ${ready.status.tenantId}::uuid`,
      (rows) => rows[0]?.name === 'Renamed by spec' && rows[0]?.industry === 'logistics',
    );
    await until(() => getTenant(slug), (t) => t.status?.observedGeneration === 2);

    const deletion = await statusesUntilGone('tenants', slug);
    await kubectl(['delete', 'tenant', slug, '--wait=true', '--timeout=60s']);
    await expect(kubectl(['get', 'tenant', slug])).rejects.toThrow(/not found/i);
    // kubectl get shows Deleting while the tenant is soft-deleted.
    expect((await deletion.seen).slice(-1)).toEqual(['Deleting/Deleting']);
    deletion.stop();
    const [row] = await sql<{ deletedAt: Date | null }[]>`select deleted_at as "deletedAt" from tenants where id = ${ready.status.tenantId}::uuid`;
    expect(row!.deletedAt).toBeInstanceOf(Date);
    // The soft delete announces a status change; the object is gone by then, so nothing is done twice.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const events = JSON.parse(await kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${slug}`, '-o', 'json']));
    expect(events.items.filter((e: any) => e.reason === 'Deleted')).toHaveLength(1);
  }, 180_000);

  it('takes the parent by id as well as by slug, and stays Ready through a spec change', async () => {
    const parent = `op-${randomUUID().slice(0, 8)}`;
    const child = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(parent));
    const parentId = (await until(() => getTenant(parent), (t) => readyCondition(t)?.status === 'True')).status.tenantId;
    await kubectl(['create', '-f', '-'], tenantObject(child, { parent: parentId, homeRegion: undefined }));
    const ready = await until(() => getTenant(child), (t) => readyCondition(t)?.status === 'True');
    const [row] = await sql<{ parentId: string }[]>`select parent_id::text as "parentId" from tenants where id = ${ready.status.tenantId}::uuid`;
    expect(row!.parentId).toBe(parentId);
    await kubectl(['patch', 'tenant', child, '--type', 'merge', '-p', JSON.stringify({ spec: { name: 'Child renamed' } })]);
    const changed = await until(() => getTenant(child), (t) => t.status?.observedGeneration === 2);
    expect(changed.status.phase).toBe('Ready');
    expect(readyCondition(changed)).toMatchObject({ status: 'True', reason: 'Provisioned' });
  }, 120_000);

  it('ends a Tenant object and a v4-created tenant in the same state', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    const viaV4 = `v4-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const created = await stack.request('POST', '/v4/platform/tenants', {
      as: 'platform@svc.test',
      body: { name: `Operator ${viaV4}`, slug: viaV4, homeRegion: 'eu', domains: [`${viaV4}.example`] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const object = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    // Provisioning gives storage first, then marks the tenant active.
    await until(() => sql<{ status: string }[]>`select status from tenants where id = ${created.body.id}::uuid`, (rows) => rows[0]?.status === 'active', 120_000);
    // Everything a tenant is given, by name: its own slug and name are the one difference.
    const stateOf = async (id: string) => {
      const [state] = await sql<Record<string, unknown>[]>`
        select t.status, t.status_reason as "statusReason", t.home_region as "homeRegion", t.usecase, t.starter_template as "starterTemplate",
          array(select d from unnest(t.domains) d order by d) as domains,
          array(select r.name || ':' || array_to_string(array(select p from unnest(r.permissions) p order by p), ',') from roles r where r.tenant_id = t.id order by r.name) as roles,
          array(select w.id || ':' || w.version from workflow_definitions w where w.tenant_id = t.id order by w.id) as workflows,
          array(select s.backend || ':' || s.status from tenant_storage s where s.tenant_id = t.id order by s.backend) as storage
        from tenants t where t.id = ${id}::uuid`;
      return JSON.parse(JSON.stringify(state).replaceAll(slug, 'SLUG').replaceAll(viaV4, 'SLUG'));
    };
    const declared = await stateOf(object.status.tenantId);
    expect(declared).toMatchObject({ status: 'active', homeRegion: 'eu', domains: ['SLUG.example'], storage: ['blob:ready', 'documentdb:ready', 'postgresql:ready', 'search:ready'] });
    expect(declared.roles.length).toBeGreaterThan(0);
    expect(declared.workflows.length).toBeGreaterThan(0);
    expect(declared).toEqual(await stateOf(created.body.id));
  }, 180_000);

  it('does not take over an existing tenant whose home region, parent or starter template differs', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await sql`insert into tenants (slug, name, home_region, status) values (${slug}, ${slug}, 'eu', 'active')`;
    await kubectl(['create', '-f', '-'], tenantObject(slug, { homeRegion: 'au' }));
    const failed = await until(() => getTenant(slug), (t) => t.status?.phase === 'Failed');
    expect(readyCondition(failed)).toMatchObject({ status: 'False', reason: 'ProvisionFailed', message: `tenant "${slug}" exists with home region eu, which cannot change` });
    const [row] = await sql<{ homeRegion: string; name: string }[]>`select home_region as "homeRegion", name from tenants where slug = ${slug}`;
    expect(row).toEqual({ homeRegion: 'eu', name: slug });
    // The object never had the tenant, so deleting it leaves the tenant alone.
    await kubectl(['delete', 'tenant', slug, '--wait=true', '--timeout=60s']);
    const [after] = await sql<{ status: string; deletedAt: Date | null }[]>`select status, deleted_at as "deletedAt" from tenants where slug = ${slug}`;
    expect(after).toEqual({ status: 'active', deletedAt: null });
  }, 180_000);

  it('refuses a second Tenant or App object that names a tenant or app another object declares; deleting it leaves them alone', async () => {
    const id = randomUUID().slice(0, 8);
    const slug = `op-${id}`;
    const claimOf = async (tenantId: string) =>
      (await sql<{ kind: string; name: string }[]>`select object_kind as kind, object_name as name from declarations where subject = ${`tenant/${tenantId}`}`)[0];
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const first = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    const tenantId = first.status.tenantId;
    expect(await claimOf(tenantId)).toEqual({ kind: 'Tenant', name: slug });

    const second = { ...tenantObject(slug), metadata: { name: `again-${id}` } };
    await kubectl(['create', '-f', '-'], second);
    const refused = await until(() => getTenant(`again-${id}`), (t) => t.status?.phase === 'Failed');
    expect(readyCondition(refused)).toMatchObject({ status: 'False', reason: 'DeclaredElsewhere', message: `tenant "${slug}" is declared by Tenant "${slug}"` });
    expect(refused.status.tenantId).toBeUndefined();
    // kubectl get shows why.
    expect(await kubectl(['get', 'tenant', `again-${id}`, '--no-headers'])).toMatch(/\sFailed\s+False\s+DeclaredElsewhere\s/);

    // Two Apps with one key in one company tenant: the second is refused the same way, before
    // its child tenant is made.
    const appSpec = { name: `Shared ${id}`, key: `shared-${id}`, companyTenant: slug };
    await kubectl(['create', '-f', '-'], appObject(`app-${id}`, appSpec));
    const app = await until(() => getApp(`app-${id}`), (a) => readyCondition(a)?.status === 'True');
    await kubectl(['create', '-f', '-'], appObject(`app-again-${id}`, { ...appSpec, childTenant: { name: `Other ${id}`, slug: `other-${id}` } }));
    const refusedApp = await until(() => getApp(`app-again-${id}`), (a) => a.status?.phase === 'Failed');
    expect(readyCondition(refusedApp)).toMatchObject({ reason: 'DeclaredElsewhere', message: `app "shared-${id}" of "${slug}" is declared by App "app-${id}"` });
    expect(await sql`select 1 from tenants where slug = ${`other-${id}`}`).toHaveLength(0);

    // Deleting the refused objects leaves the tenant and the app to the objects that declare them,
    // even one whose status names the tenant (as a duplicate made before claims were recorded).
    await kubectl(['delete', 'app', `app-again-${id}`, '--wait=true', '--timeout=60s']);
    await kubectl(['patch', 'tenant', `again-${id}`, '--subresource=status', '--type', 'merge', '-p', JSON.stringify({ status: { tenantId } })]);
    await kubectl(['delete', 'tenant', `again-${id}`, '--wait=true', '--timeout=60s']);
    const enrollment = await sql`select 1 from resources where id = ${app.status.appId}::uuid`;
    expect(enrollment).toHaveLength(1);
    const [row] = await sql<{ status: string; deletedAt: Date | null }[]>`select status, deleted_at as "deletedAt" from tenants where id = ${tenantId}::uuid`;
    expect(row).toEqual({ status: 'active', deletedAt: null });
    expect((await getTenant(slug)).status.phase).toBe('Ready');

    // Deleting the declaring App removes the app, and its claim last, so the key can be declared again.
    await kubectl(['delete', 'app', `app-${id}`, '--wait=true', '--timeout=60s']);
    expect(await sql`select 1 from resources where id = ${app.status.appId}::uuid`).toHaveLength(0);
    expect(await sql`select 1 from declarations where subject = ${`app/${tenantId}/shared-${id}`}`).toHaveLength(0);
  }, 180_000);

  it('takes over the claim of a declaring object that is gone (removed without its finalizer running)', async () => {
    const id = randomUUID().slice(0, 8);
    const slug = `op-${id}`;
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region, status) values (${slug}, ${`Operator ${slug}`}, 'eu', 'active') returning id::text`;
    // The claim a Tenant object left when its finalizer was removed by hand: no such object exists.
    await sql`insert into declarations (subject, object_kind, object_name, object_uid) values (${`tenant/${tenant!.id}`}, 'Tenant', ${`gone-${id}`}, ${randomUUID()})`;
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const adopted = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    expect(adopted.status.tenantId).toBe(tenant!.id);
    const [claim] = await sql<{ name: string; uid: string }[]>`select object_name as name, object_uid as uid from declarations where subject = ${`tenant/${tenant!.id}`}`;
    expect(claim).toEqual({ name: slug, uid: adopted.metadata.uid });
  }, 180_000);

  it('reports an API server it cannot reach on GET /health with 503', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    const kubeconfigPath = join(dir, 'config');
    writeFileSync(kubeconfigPath, JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'gone', cluster: { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'nobody', user: { token: 'none' } }],
      contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'nobody' } }],
      'current-context': 'gone',
    }));
    const lost = await startPlatform({ role: 'operator', databaseUrl: inject('databaseUrl'), tenantDatabaseUrl: inject('tenantDatabaseUrl'), port: 0, healthPort: 0, publicUrl: stack.url, temporal: stack.temporal, operator: { kubeconfigPath, namespace: leaseNamespace, identity: 'lost' } });
    try {
      expect(await health(lost)).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', kubernetes: 'unreachable', leader: 'standby' } } });
      // The health port serves the role's metrics beside /health (docs/decisions/0109-metrics.md), and nothing else.
      const metrics = await fetch(`${lost.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^# HELP svc_/m);
      expect((await fetch(`${lost.url}/nothing-here`)).status).toBe(404);
    } finally {
      await lost.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects an invalid spec at the API server, before the operator sees it', async () => {
    await expect(kubectl(['create', '-f', '-'], tenantObject('Bad_Slug'))).rejects.toThrow(/slug/);
    await expect(kubectl(['create', '-f', '-'], tenantObject(`op-${randomUUID().slice(0, 8)}`, { homeRegion: undefined }))).rejects.toThrow(/homeRegion/);
  }, 180_000);

  it('enrolls an App once its company tenant exists, with a child tenant; reconciles changes; removes it through the finalizer', async () => {
    const id = randomUUID().slice(0, 8);
    const company = `co-${id}`;
    const name = `portal-${id}`;
    await kubectl(['create', '-f', '-'], appObject(name, {
      name: `Citizen Portal ${id}`,
      companyTenant: company,
      template: 'council-portal',
      appUrl: 'https://portal.example/app',
      childTenant: { name: `Portal Tenant ${id}`, slug: `portal-${id}` },
    }));
    const pending = await until(() => getApp(name), (a) => readyCondition(a)?.reason === 'CompanyTenantNotFound');
    expect(pending.status).toMatchObject({ phase: 'Pending', key: `citizen-portal-${id}` });

    await kubectl(['create', '-f', '-'], tenantObject(company));
    const app = await until(() => getApp(name), (a) => readyCondition(a)?.status === 'True', 90_000);
    const companyId = (await getTenant(company)).status.tenantId;
    expect(app.status).toMatchObject({ phase: 'Ready', observedGeneration: 1, key: `citizen-portal-${id}`, companyTenantId: companyId });
    expect(app.metadata.finalizers).toContain('platform.svc.dev/app-cleanup');
    const enrollment = async () =>
      (await sql<{ tenantId: string; data: any }[]>`select tenant_id::text as "tenantId", data from resources where id = ${app.status.appId}::uuid`)[0];
    expect(await enrollment()).toEqual({
      tenantId: companyId,
      data: {
        key: `citizen-portal-${id}`,
        name: `Citizen Portal ${id}`,
        template: 'council-portal',
        source: 'svc-cli',
        appUrl: 'https://portal.example/app',
        status: 'pending',
        childTenantId: app.status.childTenantId,
        childTenantSlug: `portal-${id}`,
      },
    });
    const child = async () =>
      (await sql<{ parentId: string; status: string; starterTemplate: string; deleted: boolean }[]>`
        select parent_id::text as "parentId", status, starter_template as "starterTemplate", deleted_at is not null as deleted
        from tenants where id = ${app.status.childTenantId}::uuid`)[0];
    expect(await child()).toEqual({ parentId: companyId, status: 'active', starterTemplate: 'council-portal', deleted: false });
    const reasons = () => kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${name},involvedObject.kind=App`, '-o', 'json']).then((out) => JSON.parse(out).items.map((e: any) => e.reason));
    expect(await until(reasons, (r: string[]) => r.includes('Enrolled'), 10_000)).toEqual(expect.arrayContaining(['CompanyTenantNotFound', 'Enrolled']));

    // A changed spec reaches the enrollment; the key stays the one recorded at creation.
    await kubectl(['patch', 'app', name, '--type', 'merge', '-p', JSON.stringify({ spec: { name: 'Renamed Portal', lifecycleStatus: 'active' } })]);
    await until(enrollment, (row) => row?.data.status === 'active' && row.data.name === 'Renamed Portal');
    expect((await until(() => getApp(name), (a) => a.status?.observedGeneration === 2)).status).toMatchObject({ phase: 'Ready', key: `citizen-portal-${id}` });
    // A key added later must be the recorded one.
    await kubectl(['patch', 'app', name, '--type', 'merge', '-p', JSON.stringify({ spec: { key: 'another-key' } })]);
    const mismatch = await until(() => getApp(name), (a) => readyCondition(a)?.reason === 'KeyMismatch');
    expect(mismatch.status.phase).toBe('Failed');
    expect(mismatch.status.conditions.find((c: any) => c.type === 'Degraded')).toMatchObject({ status: 'True', reason: 'KeyMismatch' });

    const deletion = await statusesUntilGone('apps', name);
    await kubectl(['delete', 'app', name, '--wait=true', '--timeout=60s']);
    await expect(kubectl(['get', 'app', name])).rejects.toThrow(/not found/i);
    expect((await deletion.seen).slice(-1)).toEqual(['Deleting/Deleting']);
    deletion.stop();
    expect(await enrollment()).toBeUndefined();
    expect((await child())!.deleted).toBe(true);
  }, 180_000);

  it('derives an App child tenant\'s slug from its name, and creates it under parentTenant, a tenant below the company tenant', async () => {
    const id = randomUUID().slice(0, 8);
    const company = `co-${id}`;
    const region = `region-${id}`;
    await kubectl(['create', '-f', '-'], tenantObject(company));
    await kubectl(['create', '-f', '-'], tenantObject(region, { parent: company, homeRegion: undefined }));
    await kubectl(['create', '-f', '-'], appObject(`kiosk-${id}`, { name: `Kiosk ${id}`, companyTenant: company, parentTenant: region, childTenant: { name: ` Kiosk Tenant ${id} ` } }));
    const app = await until(() => getApp(`kiosk-${id}`), (a) => readyCondition(a)?.status === 'True', 90_000);
    const [child] = await sql<{ slug: string; name: string; parentId: string }[]>`
      select slug, name, parent_id::text as "parentId" from tenants where id = ${app.status.childTenantId}::uuid`;
    expect(child).toEqual({ slug: `kiosk-tenant-${id}`, name: `Kiosk Tenant ${id}`, parentId: (await getTenant(region)).status.tenantId });

    // A parent outside the company tenant is refused, and nothing is created there.
    await kubectl(['create', '-f', '-'], appObject(`stall-${id}`, { name: `Stall ${id}`, companyTenant: company, parentTenant: 'globex', childTenant: { name: `Stall ${id}` } }));
    const refused = await until(() => getApp(`stall-${id}`), (a) => a.status?.phase === 'Failed');
    expect(readyCondition(refused)).toMatchObject({ reason: 'EnrollFailed', message: expect.stringContaining(`parent tenant "globex" below "${company}"`) });
    expect(await sql`select 1 from tenants where slug = ${`stall-${id}`}`).toEqual([]);

    // A name whose kebab-case has the form of a tenant id gives no slug: refused, nothing created.
    const uuidLike = randomUUID();
    await kubectl(['create', '-f', '-'], appObject(`booth-${id}`, { name: `Booth ${id}`, companyTenant: company, childTenant: { name: uuidLike.replaceAll('-', ' ') } }));
    const noSlug = await until(() => getApp(`booth-${id}`), (a) => a.status?.phase === 'Failed');
    expect(readyCondition(noSlug)).toMatchObject({ reason: 'InvalidChildSlug', message: expect.stringContaining('must not have the form of a tenant id') });
    expect(await sql`select 1 from tenants where slug = ${uuidLike}`).toEqual([]);
  }, 180_000);

  it('deletes with an App only a child tenant below its company tenant, whatever its enrollment names', async () => {
    const id = randomUUID().slice(0, 8);
    const company = `co-${id}`;
    await kubectl(['create', '-f', '-'], tenantObject(company));
    await kubectl(['create', '-f', '-'], appObject(`mall-${id}`, { name: `Mall ${id}`, companyTenant: company, childTenant: { name: `Mall Tenant ${id}` } }));
    await until(() => getApp(`mall-${id}`), (a) => readyCondition(a)?.status === 'True', 90_000);
    const victim = `victim-${id}`;
    const created = await stack.request('POST', '/v4/platform/tenants', { as: 'platform@svc.test', body: { name: 'Not the app\u2019s', slug: victim, homeRegion: 'eu' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // An enrollment changed behind the apps service's back (the resource routes refuse it) names another tenant.
    const changed = await sql`update resources set data = jsonb_set(data, '{childTenantSlug}', to_jsonb(${victim}::text))
      where type = 'tenant-vertical-enrollment' and data ->> 'key' = ${`mall-${id}`} returning id`;
    expect(changed).toHaveLength(1);
    await kubectl(['delete', 'app', `mall-${id}`, '--wait=false']);
    await until(() => kubectl(['get', 'app', `mall-${id}`, '--ignore-not-found', '-o', 'name']), (out) => out.trim() === '', 60_000);
    const [row] = await sql<{ status: string }[]>`select status from tenants where slug = ${victim}`;
    expect(row!.status).not.toBe('deleted');
  }, 180_000);

  it('converges after the operator is stopped mid-way; one of two replicas leads, the other takes over', async () => {
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await operators.shift()!.close();
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const a = await startOperatorProcess('replica-a2');
    const b = await startOperatorProcess('replica-b');
    operators.push(a, b);
    await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True');
    const holder = async () => JSON.parse(await kubectl(['get', 'lease', 'svc-platform-operator', '-n', leaseNamespace, '-o', 'json'])).spec.holderIdentity;
    const leader = await holder();
    expect(['replica-a2', 'replica-b']).toContain(leader);
    const [leading, standby] = leader === 'replica-a2' ? [a, b] : [b, a];
    expect(await health(leading)).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', kubernetes: 'ok', leader: 'leading' } } });
    expect(await health(standby)).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', kubernetes: 'ok', leader: 'standby' } } });
    await leading.close();
    operators.splice(operators.indexOf(leading), 1);
    await until(holder, (h) => h === (standby === a ? 'replica-a2' : 'replica-b'), 60_000);
    const next = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(next));
    await until(() => getTenant(next), (t) => readyCondition(t)?.status === 'True');
  }, 240_000);

  it('provisions a Tenant applied while its operator could not reach the workflow engine: the start waits in the outbox and runs once', async () => {
    for (const operator of operators.splice(0)) await operator.close();
    // Nothing listens on this port: every start of a workflow the operator makes fails as in an outage.
    const unreachable = { ...stack.temporal, address: `127.0.0.1:${await freePort()}` };
    operators.push(await startOperatorProcess('during-outage', { temporal: unreachable }));
    const slug = `op-${randomUUID().slice(0, 8)}`;
    await kubectl(['create', '-f', '-'], tenantObject(slug));
    const phases = new Set<string>();
    const observed = async () => {
      const object = await getTenant(slug);
      if (object.status?.phase) phases.add(object.status.phase);
      return object;
    };
    const stored = () => sql<{ id: string; status: string; reason: string | null }[]>`select id::text as id, status, status_reason as reason from tenants where slug = ${slug}`;
    // The tenant is committed with its provisioning start, never failed because the engine is away.
    const during = await until(observed, (t) => t.status?.phase === 'Provisioning', 60_000);
    expect(readyCondition(during)).toMatchObject({ status: 'False', reason: 'Provisioning' });
    expect((await stored())[0]).toMatchObject({ status: 'provisioning', reason: null });

    // The start is kept: a process of the deployment that reaches the engine (on the same task queue) starts it.
    await operators.splice(0)[0]!.close();
    operators.push(await startOperatorProcess('after-outage'));
    const ready = await until(observed, (t) => readyCondition(t)?.status === 'True', 120_000);
    expect(ready.status).toMatchObject({ phase: 'Ready', observedGeneration: 1 });
    expect([...phases]).not.toContain('Failed');
    const [tenant] = await stored();
    expect(tenant).toMatchObject({ status: 'active', reason: null });
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      const runs = () => runStatuses(client, `tenant-${tenant!.id}-provision`);
      // The run closes just after its last activity made the tenant active.
      expect(await until(runs, (r) => r.length > 0 && !r.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
    } finally {
      await connection.close();
    }
  }, 240_000);

  it('does all its work with only the permissions the chart grants its ServiceAccount', async () => {
    for (const operator of operators.splice(0)) await operator.close();
    const dir = mkdtempSync(join(tmpdir(), 'svc-operator-rbac-'));
    try {
      const kubeconfigPath = await chartOperatorKubeconfig(leaseNamespace, dir);
      operators.push(await startOperatorProcess('chart-service-account', { kubeconfigPath }));
      const slug = `op-${randomUUID().slice(0, 8)}`;
      await kubectl(['create', '-f', '-'], tenantObject(slug));
      const ready = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True', 90_000);
      const secret = JSON.parse(await kubectl(['get', 'secret', 'tenant-connection', '-n', `tenant-${slug}`, '-o', 'json']));
      expect(Buffer.from(secret.data.TENANT_ID, 'base64').toString()).toBe(ready.status.tenantId);
      const reasons = () => kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${slug}`, '-o', 'json']).then((out) => JSON.parse(out).items.map((e: any) => e.reason));
      expect(await until(reasons, (r: string[]) => r.includes('Provisioned'), 10_000)).toContain('Provisioned');
      const holder = JSON.parse(await kubectl(['get', 'lease', 'svc-platform-operator', '-n', leaseNamespace, '-o', 'json'])).spec.holderIdentity;
      expect(holder).toBe('chart-service-account');

      await kubectl(['patch', 'tenant', slug, '--type', 'merge', '-p', JSON.stringify({ spec: { name: `Renamed ${slug}` } })]);
      await until(() => getTenant(slug), (t) => t.status?.observedGeneration === 2 && readyCondition(t)?.status === 'True');
      const rows = () => sql<{ name: string; status: string }[]>`select name, status from tenants where id = ${ready.status.tenantId}::uuid`;
      expect(await rows()).toEqual([{ name: `Renamed ${slug}`, status: 'active' }]);

      await kubectl(['delete', 'tenant', slug, '--wait=false']);
      await until(() => kubectl(['get', 'tenant', slug, '--ignore-not-found', '-o', 'name']), (out) => out.trim() === '', 60_000);
      expect((await rows())[0]!.status).toBe('deleted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
