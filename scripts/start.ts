import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { generateSigningJwks } from '../api-edge/identity/dev-provider.ts';
import { bunRuntime } from '../api-edge/server.ts';
import { migrate } from '../control-plane/db/migrate.ts';
import { ensureTenantLogin } from '../control-plane/db/tenant-login.ts';
import { DEFAULT_TASK_QUEUE } from '../control-plane/temporal/workflow-contract.ts';
import { isNodeRole, spawnNodeRole, type NodeRole } from './stack/node-roles.ts';
import { startPlatform, type PlatformRole, type PlatformOptions } from './stack/platform.ts';
import { ensureLocalPostgres } from './stack/postgres.ts';
import { ensurePlatformTemporal } from './stack/temporal.ts';
import { stateDir } from './stack/state-dir.ts';

// Below the ephemeral range (32768-60999), where an outgoing connection could hold the port.
const DEV_POSTGRES = { name: 'pg-dev', port: 25432 } as const;
const DEV_DATABASE = 'svc';
const DEV_TEMPORAL = { name: 'temporal-dev', port: 7233, uiPort: 8233 } as const;
/** How long a Node role may take to stop (the chart gives the worker 60 s) before it is killed. */
const CHILD_STOP_MS = 60_000;
/** How often a role started beside the platform process checks that its parent still runs. */
const PARENT_CHECK_MS = 1_000;

const { values: args } = parseArgs({
  options: { role: { type: 'string', default: process.env.SVC_ROLE ?? 'all' } },
  allowPositionals: false,
});
const role = args.role as PlatformRole;
if (!['all', 'edge', 'control-plane', 'worker', 'operator'].includes(role)) {
  console.error(`unknown role "${role}": use all, edge, control-plane, worker or operator`);
  process.exit(2);
}
if (bunRuntime && isNodeRole(role)) {
  // `npm start` runs on Bun: a worker or operator role is handed to Node, whose SDKs it needs.
  const child = spawnNodeRole(role, {}, 'inherit');
  // SIGTERM whatever arrived: a terminal's Ctrl-C reaches the child as well, and a second SIGINT would cut its shutdown short.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'));
  const [code] = await once(child, 'exit');
  process.exit(code ?? 1);
}
const env = process.env;
const log = (message: string, detail?: unknown) => console.error(detail === undefined ? message : `${message}: ${String((detail as Error)?.stack ?? detail)}`);

/** The database: `DATABASE_URL`, or a private local PostgreSQL cluster with a `svc` database. */
async function databaseUrl(): Promise<string> {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const cluster = await ensureLocalPostgres({ ...DEV_POSTGRES, log: (m) => log(`[postgres] ${m}`) });
  const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
  try {
    const exists = await admin`select 1 from pg_database where datname = ${DEV_DATABASE}`;
    if (exists.length === 0) await admin.unsafe(`create database ${DEV_DATABASE}`);
  } finally {
    await admin.end();
  }
  return cluster.url.replace(/\/[^/]*$/, `/${DEV_DATABASE}`);
}

/** The built-in provider's signing keys, kept in the state directory so tokens survive restarts. */
async function devSigningKeys() {
  const file = join(stateDir('dev-identity'), 'signing-jwks.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const jwks = await generateSigningJwks();
  writeFileSync(file, JSON.stringify(jwks), { mode: 0o600 });
  return jwks;
}

/** Per-minute budgets from `RATE_LIMIT_RESOURCES_PER_MINUTE` and `RATE_LIMIT_API_PER_MINUTE`, when set. */
function rateLimitPolicies() {
  const perMinute = (value: string | undefined) => (value ? { points: Number(value), durationSeconds: 60 } : undefined);
  const resources = perMinute(env.RATE_LIMIT_RESOURCES_PER_MINUTE);
  const api = perMinute(env.RATE_LIMIT_API_PER_MINUTE);
  return { ...(resources ? { resources } : {}), ...(api ? { users: api } : {}) };
}

/**
 * The operator runs when a kubeconfig is reachable: the files of the `KUBECONFIG` list that exist
 * (merged), else `~/.kube/config`, else in a cluster.
 */
function operatorSettings() {
  const home = join(homedir(), '.kube', 'config');
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file && existsSync(file));
  const kubeconfigPath = env.KUBECONFIG ? listed.join(delimiter) || undefined : existsSync(home) ? home : undefined;
  if (!kubeconfigPath && !env.KUBERNETES_SERVICE_HOST) return undefined;
  return { kubeconfigPath, namespace: env.OPERATOR_NAMESPACE, identity: env.POD_NAME, leaseName: env.OPERATOR_LEASE_NAME };
}

const externalIdentity = env.AUTH_ISSUER && env.AUTH_JWKS_URL
  ? { issuer: env.AUTH_ISSUER, audience: env.AUTH_AUDIENCE ?? 'urn:svc:api', jwksUrl: env.AUTH_JWKS_URL, tenantClaim: env.AUTH_TENANT_CLAIM }
  : undefined;
/**
 * The backend-for-frontend's client at the identity provider, and the key of its sign-in cookie,
 * which every edge instance must share (the chart gives it from a Secret); without one, each
 * process makes its own.
 */
function bffSettings(): PlatformOptions['bff'] {
  const secret = env.SIGN_IN_KEY ? Buffer.from(env.SIGN_IN_KEY, 'base64') : undefined;
  if (secret && secret.length !== 32) throw new Error('SIGN_IN_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return { clientId: env.BFF_CLIENT_ID || undefined, clientSecret: env.BFF_CLIENT_SECRET || undefined, scope: env.BFF_SCOPE || undefined, secret };
}

const port = Number(env.PORT ?? (role === 'control-plane' ? 8081 : 8080));
const publicUrl = env.PUBLIC_URL ?? (role === 'control-plane' ? env.EDGE_URL ?? 'http://localhost:8080' : `http://localhost:${port}`);
/**
 * On Bun (`npm start`), role `all` serves the edge and control plane from this process and runs the
 * Temporal worker and the operator as Node processes: their SDKs support Node only.
 */
const nodeChildren = !!bunRuntime && role === 'all';

/** Runs a Node role as a child sharing this process's settings and stderr; the platform stops if it ends. */
function startNodeRole(childRole: NodeRole, childEnv: Record<string, string>): ChildProcess {
  // Their health servers are for this process's own use: a free port on the loopback address.
  const child = spawnNodeRole(childRole, { ...childEnv, HOST: '127.0.0.1', HEALTH_PORT: '0' }, ['ignore', 'ignore', 'inherit']);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    log(`the ${childRole} process ended (${signal ?? `exit code ${code}`}); stopping the platform`);
    void stop(1);
  });
  return child;
}

const url = await databaseUrl();
const temporal =
  role === 'edge' ? undefined : await ensurePlatformTemporal({ ...DEV_TEMPORAL, log: (m) => log(`[temporal] ${m}`) });
if (role !== 'edge') {
  const applied = await migrate(url);
  if (applied.length) log(`applied migrations: ${applied.join(', ')}`);
}
// On the private cluster, tenant connections log in as a role of their own (docs/decisions.md).
// An edge without CONTROL_PLANE_URL runs a control plane of its own, and its tenant connections too.
const tenantUrl = env.TENANT_DATABASE_URL || (!env.DATABASE_URL && (role !== 'edge' || !env.CONTROL_PLANE_URL) ? await ensureTenantLogin(url) : undefined);
const platform = await startPlatform({
  role,
  databaseUrl: url,
  tenantDatabaseUrl: tenantUrl,
  host: env.HOST ?? '0.0.0.0',
  port,
  publicUrl,
  controlPlaneUrl: role === 'edge' ? env.CONTROL_PLANE_URL : undefined,
  identity: externalIdentity,
  bff: bffSettings(),
  trustedProxies: env.TRUSTED_PROXIES?.split(','),
  blobRoot: env.SVC_BLOB_DIR,
  temporal: temporal && { address: temporal.address, namespace: temporal.namespace, taskQueue: env.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE },
  devSigningKeys: externalIdentity ? undefined : await devSigningKeys(),
  seedDevelopmentData: !externalIdentity && env.SVC_DEV_SEED !== 'false',
  rateLimits: { policies: rateLimitPolicies() },
  runWorker: !nodeChildren,
  operator: (role === 'all' && !nodeChildren) || role === 'operator' ? operatorSettings() : undefined,
  // The chart sets HEALTH_PORT; locally the two roles get ports of their own, and 0 picks a free one.
  healthPort: role === 'worker' || role === 'operator' ? Number(env.HEALTH_PORT ?? (role === 'worker' ? 8090 : 8091)) : undefined,
  log,
});

let stopping = false;
const children: ChildProcess[] = [];
if (nodeChildren) {
  // This process has migrated and seeded the database already.
  const childEnv = { DATABASE_URL: url, ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}), PUBLIC_URL: publicUrl, SVC_DEV_SEED: 'false', ...(temporal ? { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace } : {}) };
  if (temporal) children.push(startNodeRole('worker', childEnv));
  if (operatorSettings()) children.push(startNodeRole('operator', childEnv));
}

// `npm run token` asks http://localhost:8080 unless SVC_URL names another issuer.
const tokenCommand = `${publicUrl === 'http://localhost:8080' ? '' : `SVC_URL=${publicUrl} `}npm run -s token -- admin@acme.test`;
const temporalLine = temporal ? `\n  Temporal:      ${temporal.address}${temporal.uiUrl ? ` (UI ${temporal.uiUrl})` : ''}` : '';
const operatorLine = role === 'all' || role === 'operator' ? `\n  operator:      ${operatorSettings() ? 'reconciling Tenant and App objects (kubeconfig found)' : 'off (no kubeconfig)'}` : '';
if (role === 'operator') {
  console.log(`operator running${operatorLine}\n  health:        ${platform.url}/health`);
} else if (role === 'worker') {
  console.log(`worker running on task queue ${env.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE}${temporalLine}\n  health:        ${platform.url}/health`);
} else if (role === 'control-plane') {
  console.log(`control plane (tRPC) listening on ${platform.url}; point the edge at it with CONTROL_PLANE_URL=${platform.url}`);
} else {
  console.log(`platform ready on ${platform.url}
  health:        ${platform.url}/health
  REST v3:       ${platform.url}/api/svc/v3
  sign-in:       ${platform.url}/.well-known/openid-configuration${externalIdentity ? ' (external provider in use)' : ''}
  get a token:   TOKEN=$(${tokenCommand})
  try it:        curl -H "Authorization: Bearer $TOKEN" ${platform.url}/api/svc/v3/users/me${temporalLine}${operatorLine}`);
}

/** Stops the Node roles (each finishes its work first) and this process's platform, then exits. */
async function stop(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const ended = children
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map((c) => {
      const exited = once(c, 'exit');
      c.kill('SIGTERM');
      const kill = setTimeout(() => c.kill('SIGKILL'), CHILD_STOP_MS);
      return exited.finally(() => clearTimeout(kill));
    });
  await Promise.allSettled([platform.close(), ...ended]);
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(0));

// A role that `npm start` runs beside it stops when that process is gone, however it ended.
const parentPid = Number(env.SVC_PARENT_PID);
if (parentPid) {
  setInterval(() => {
    if (process.ppid === parentPid) return;
    log('the platform process that started this one is gone; stopping');
    void stop(0);
  }, PARENT_CHECK_MS).unref();
}
