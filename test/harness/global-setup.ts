import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../control-plane/app/migrate.ts';
import { ensureTenantLogin } from '../../control-plane/db/tenant-login.ts';
import { ensureHelm, ensureKubeApiServer, ensureKubeBinaries, runKubectl } from '../../scripts/stack/kubernetes.ts';
import { createDatabase, dropDatabase, ensureLocalPostgres } from '../../scripts/stack/postgres.ts';
import { ensurePlatformTemporal } from '../../scripts/stack/temporal.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The run's database as the tenant connections' own login (a member of svc_app only). */
    tenantDatabaseUrl: string;
    /** How the e2e suites' edge reaches the control plane (set per vitest project). */
    controlPlaneMode: 'in-process' | 'http' | 'bun';
    /** Temporal frontend (`host:port`) and namespace the run's workers and clients use. */
    temporalAddress: string;
    temporalNamespace: string;
    /** Admin kubeconfig of the run's Kubernetes API server (etcd + kube-apiserver, no nodes). */
    kubeconfigPath: string;
    /** The `kubectl` and `helm` binaries matching that server. */
    kubectlPath: string;
    helmPath: string;
  }
}

// The fixed ports of test and benchmark servers lie below 32768, outside Linux's ephemeral port
// range (32768-60999), so that no outgoing connection on the machine can hold one of them.

/** The Temporal dev server tests use when `TEMPORAL_ADDRESS` is not set (headless, its own history file). */
export const TEST_TEMPORAL = { name: 'temporal-test', port: 27239 } as const;

/** The API server (and its etcd, on the next two ports) tests use. */
export const TEST_KUBE = { name: 'kube-test', port: 26443 } as const;

/** The private, non-durable cluster tests use when `DATABASE_URL` is not set. */
export const TEST_POSTGRES = { name: 'pg-test', port: 24339 } as const;

const TEST_DB = /^svc_test_(\d+)_[0-9a-f]+$/;

/**
 * The tenant connections' login for the run's database: on the private cluster the role made for
 * it; with `DATABASE_URL`, the login of `TENANT_DATABASE_URL` (its database swapped for the run's),
 * else `DATABASE_URL`'s own.
 */
async function tenantLoginFor(url: string): Promise<string> {
  if (!process.env.DATABASE_URL) return ensureTenantLogin(url);
  if (!process.env.TENANT_DATABASE_URL) return url;
  const login = new URL(process.env.TENANT_DATABASE_URL);
  login.pathname = new URL(url).pathname;
  return login.toString();
}

/**
 * Creates one freshly migrated database for the run and provides its URL as `databaseUrl`; the
 * returned teardown drops it. The private cluster stays up so that the next run starts fast.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Built from Go modules on a cold machine (minutes): started first, awaited last.
  const kubeLog = (msg: string) => process.stderr.write(`[${TEST_KUBE.name}] ${msg}\n`);
  const kube = Promise.all([
    ensureKubeBinaries({ log: kubeLog }).then((binaries) => ensureKubeApiServer({ ...TEST_KUBE, binaries, log: kubeLog })),
    ensureHelm({ log: kubeLog }),
  ]);
  kube.catch(() => {});
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const cluster = await ensureLocalPostgres({
      ...TEST_POSTGRES,
      durable: false,
      log: (msg) => process.stderr.write(`[${TEST_POSTGRES.name}] ${msg}\n`),
    });
    adminUrl = cluster.url;
    await dropAbandonedDatabases(adminUrl);
  }
  const dbName = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = await createDatabase(adminUrl, dbName);
  try {
    await migrate(url);
  } catch (error) {
    await dropDatabase(adminUrl, dbName);
    throw error;
  }
  project.provide('databaseUrl', url);
  project.provide('tenantDatabaseUrl', await tenantLoginFor(url));
  const temporal = await ensurePlatformTemporal({ ...TEST_TEMPORAL, log: (msg) => process.stderr.write(`[${TEST_TEMPORAL.name}] ${msg}\n`) });
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalNamespace', temporal.namespace);
  const [apiServer, helm] = await kube;
  await clearEarlierObjects(apiServer.kubectl, apiServer.kubeconfigPath);
  project.provide('kubeconfigPath', apiServer.kubeconfigPath);
  project.provide('kubectlPath', apiServer.kubectl);
  project.provide('helmPath', helm);
  const admin = adminUrl;
  return () => dropDatabase(admin, dbName);
}

/**
 * Deletes the Apps and Tenants that earlier runs left on the reused API server: they name tenants
 * of earlier runs' databases, and this run's operators would otherwise provision every one of them
 * again in this run's database. No operator runs yet, so their finalizers are dropped first.
 */
async function clearEarlierObjects(kubectl: string, kubeconfig: string): Promise<void> {
  for (const kind of ['apps.platform.svc.dev', 'tenants.platform.svc.dev']) {
    const names = (await runKubectl(kubectl, kubeconfig, ['get', kind, '-o', 'name']).catch(() => '')).split('\n').filter(Boolean);
    if (!names.length) continue;
    // One that is gone meanwhile (its deletion was under way) fails the patch of none of the others.
    await runKubectl(kubectl, kubeconfig, ['patch', ...names, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']).catch(() => undefined);
    await runKubectl(kubectl, kubeconfig, ['delete', ...names, '--ignore-not-found', '--wait=false']);
  }
}

/** Drops test databases of runs on this machine whose process is gone (interrupted runs). */
async function dropAbandonedDatabases(adminUrl: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  let names: string[];
  try {
    const rows = await sql<{ datname: string }[]>`select datname from pg_database where datname like 'svc\_test\_%'`;
    names = rows.map((r) => r.datname);
  } finally {
    await sql.end({ timeout: 5 });
  }
  for (const name of names) {
    const pid = Number(TEST_DB.exec(name)?.[1]);
    if (pid > 0 && !isAlive(pid)) await dropDatabase(adminUrl, name);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
