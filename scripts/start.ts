import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { generateSigningJwks } from '../api-edge/identity/dev-provider.ts';
import { bunRuntime } from '../api-edge/server.ts';
import { migrate } from '../control-plane/app/migrate.ts';
import { ensureTenantLogin } from '../control-plane/db/tenant-login.ts';
import { generateControlPlaneToken } from '../control-plane/app/control-plane-token.ts';
import { ConfigError, parseRole, runMain } from '../main.ts';
import { handOffToNode, isNodeRole } from '../control-plane/app/node-roles.ts';
import { alreadyRunning, claimInstance } from './stack/local-instance.ts';
import { resetLocalState, resetRefusal } from './stack/reset.ts';
import type { PlatformRole } from '../control-plane/app/platform.ts';
import { ensureLocalPostgres } from './stack/postgres.ts';
import { ensurePlatformTemporal } from './stack/temporal.ts';
import { stateDir } from '../control-plane/app/state-dir.ts';

/**
 * `npm start`: ensures the local services a development machine lacks (a private PostgreSQL with a
 * `svc` database and the tenant login, the Temporal dev server, the built-in provider's signing
 * keys, the control plane's credential shared by split roles, the migrations), then runs `main.ts` with their settings. A setting given in the
 * environment (`DATABASE_URL`, `TEMPORAL_ADDRESS`) is used instead of the local service.
 * A role already running on this state directory is named instead of started twice (exit code 1);
 * `--reset` first removes the local state (scripts/stack/reset.ts), and refuses while the platform runs.
 */

// Below the ephemeral range (32768-60999), where an outgoing connection could hold the port.
const DEV_POSTGRES = { name: 'pg-dev', port: 25432 } as const;
const DEV_DATABASE = 'svc';
const DEV_TEMPORAL = { name: 'temporal-dev', port: 7233, uiPort: 8233 } as const;

const RESET = '--reset';
const reset = process.argv.includes(RESET);
const argv = process.argv.slice(2).filter((arg) => arg !== RESET);
const env = { ...process.env };
const log = (message: string) => console.error(message);

let role: PlatformRole;
try {
  role = parseRole(argv, env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  log(error.message);
  process.exit(2);
}
if (reset) {
  const refusal = resetRefusal();
  if (refusal) {
    log(refusal);
    process.exit(1);
  }
  await resetLocalState(log);
}
// `npm start` runs on Bun: a worker or operator role is handed to Node, whose SDKs it needs.
if (bunRuntime && isNodeRole(role)) await handOffToNode(fileURLToPath(import.meta.url), role, env);

/** Where the role answers, as its ready message will say (`PORT`, `PUBLIC_URL`, `HEALTH_PORT`). */
function roleUrl(): string {
  if (role === 'worker' || role === 'operator') return `http://localhost:${env.HEALTH_PORT || (role === 'worker' ? 8090 : 8091)}/health`;
  if (role === 'control-plane') return `http://localhost:${env.PORT || 8081}`;
  return env.PUBLIC_URL || `http://localhost:${env.PORT || 8080}`;
}
const running = claimInstance(role, roleUrl());
if (running) {
  log(alreadyRunning(running));
  process.exit(1);
}

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

/** The control plane's credential that `npm start -- --role control-plane` and `--role edge` share, kept in the state directory. */
function localControlPlaneToken(): string {
  const file = join(stateDir('control-plane'), 'token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = generateControlPlaneToken();
  writeFileSync(file, token, { mode: 0o600 });
  return token;
}

const url = await databaseUrl();
const temporal = role === 'edge' ? undefined : await ensurePlatformTemporal({ ...DEV_TEMPORAL, log: (m) => log(`[temporal] ${m}`) });
if (role !== 'edge') {
  // Before the tenant login, which is a member of the role the migrations create; main's own run then has nothing left to apply.
  const applied = await migrate(url);
  if (applied.length) log(`applied migrations: ${applied.join(', ')}`);
}
// On the private cluster, tenant connections log in as a role of their own (docs/decisions/0039-tenant-login-role.md).
// An edge without CONTROL_PLANE_URL runs a control plane of its own, and its tenant connections too.
const tenantUrl = env.TENANT_DATABASE_URL || (!env.DATABASE_URL && (role !== 'edge' || !env.CONTROL_PLANE_URL) ? await ensureTenantLogin(url) : undefined);
const externalIdentity = !!(env.AUTH_ISSUER && env.AUTH_JWKS_URL);

await runMain(
  argv,
  {
    ...env,
    DATABASE_URL: url,
    ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}),
    ...(temporal ? { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace } : {}),
  },
  {
    devSigningKeys: externalIdentity ? undefined : await devSigningKeys(),
    temporalUiUrl: temporal?.uiUrl,
    controlPlaneToken: role === 'control-plane' || role === 'edge' ? localControlPlaneToken() : undefined,
  },
);
