import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { ensureTenantLogin } from '../../control-plane/db/tenant-login.ts';
import { migrate } from '../../control-plane/app/migrate.ts';
import { createDatabase, dropDatabase, ensureLocalPostgres } from '../../scripts/stack/postgres.ts';

/** The private cluster the benchmark uses when `DATABASE_URL` is not set. */
export const BENCH_POSTGRES = { name: 'pg-bench', port: 24359 } as const;

/** The platform's database and pgbench's own (`pgbench -i`) database. */
export const BENCH_DATABASES = { platform: 'svc_bench', pgbench: 'svc_bench_pgbench' } as const;

export interface BenchCluster {
  /** Superuser URL of the `postgres` database. */
  adminUrl: string;
  /** The server log, when the benchmark runs its own cluster (it then captures statements from it). */
  logFile?: string;
}

/** `DATABASE_URL` when set, otherwise the private `pg-bench` cluster (started or reused). */
export async function benchCluster(log: (msg: string) => void): Promise<BenchCluster> {
  if (process.env.DATABASE_URL) return { adminUrl: process.env.DATABASE_URL };
  const cluster = await ensureLocalPostgres({ ...BENCH_POSTGRES, log: (msg) => log(`[${BENCH_POSTGRES.name}] ${msg}`) });
  return { adminUrl: cluster.url, logFile: cluster.dataDir.replace(/\/data\/?$/, '/postgres.log') };
}

/** Creates the platform's database afresh and migrates it; returns its URL. */
export async function createPlatformDatabase(adminUrl: string): Promise<string> {
  const url = await createDatabase(adminUrl, BENCH_DATABASES.platform);
  await migrate(url);
  return url;
}

/** The tenant connections' own login on the private cluster, as `npm start` uses it; none with `DATABASE_URL`. */
export async function tenantLoginOf(cluster: BenchCluster, url: string): Promise<string | undefined> {
  return cluster.logFile ? ensureTenantLogin(url) : undefined;
}

/** A benchmark's own database, created afresh and migrated, with the tenant login `npm start` would use on it. */
export async function benchDatabase(cluster: BenchCluster, name: string): Promise<{ url: string; tenantUrl: string | undefined }> {
  const url = await createDatabase(cluster.adminUrl, name);
  await migrate(url);
  return { url, tenantUrl: await tenantLoginOf(cluster, url) };
}

/** Drops both benchmark databases (the cluster keeps running). */
export async function dropBenchDatabases(adminUrl: string): Promise<void> {
  for (const name of Object.values(BENCH_DATABASES)) await dropDatabase(adminUrl, name);
}

/** Runs `fn` with a one-connection superuser client of `url`. */
export async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: 'svc-bench' } });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Inserts `count` resources of `type` (`project`, or a type of the same shape) for tenant `slug` in one statement: names, a status among
 * active / completed / in-progress, budgets between 100 and 250,000, start dates over four years,
 * `metadata` {department, priority 1..5}, and creation times over the last 100 days, to the
 * millisecond as the platform stores them. The table is then vacuumed and analysed.
 */
export async function loadProjects(url: string, slug: string, count: number, type = 'project'): Promise<void> {
  await withSql(url, async (sql) => {
    await sql`
      insert into resources (tenant_id, type, data, created_by, created_at, updated_at)
      select t.id, ${type},
        jsonb_build_object(
          'name', 'Project ' || g,
          'status', (array['active', 'completed', 'in-progress'])[1 + g % 3],
          'budget', round((100 + random() * 249900)::numeric, 2),
          'startDate', to_char(date '2022-01-01' + (g % 1460), 'YYYY-MM-DD'),
          'owner', 'owner' || (g % 50) || '@acme.test',
          'metadata', jsonb_build_object(
            'department', (array['engineering', 'sales', 'marketing', 'finance', 'operations'])[1 + g % 5],
            'priority', 1 + (g * 7) % 5)),
        (select m.user_id from memberships m where m.tenant_id = t.id limit 1),
        created, created
      from tenants t,
        generate_series(1, ${count}::int) g,
        lateral (select date_trunc('milliseconds', now() - interval '100 days' + (g * interval '100 days') / ${count}::int)) c(created)
      where t.slug = ${slug}`;
    await sql.unsafe('vacuum analyze resources');
  });
}

/** The table that holds the id set, numbered 1..count, for pgbench to pick from. */
export const ID_TABLE = 'bench_ids';

/**
 * Picks `count` random ids of the tenant's `project` resources and stores them, numbered from 1,
 * in table `bench_ids` (n, id); returns them in that order.
 */
export async function createIdSet(url: string, slug: string, count: number): Promise<string[]> {
  return withSql(url, async (sql) => {
    await sql.unsafe(`create table ${ID_TABLE} (n int primary key, id uuid not null)`);
    await sql`
      insert into ${sql(ID_TABLE)} (n, id)
      select row_number() over (), id from (
        select r.id from resources r join tenants t on t.id = r.tenant_id
        where t.slug = ${slug} and r.type = 'project' order by random() limit ${count}) picked`;
    const rows = await sql<{ id: string }[]>`select id::text as id from ${sql(ID_TABLE)} order by n`;
    return rows.map((r) => r.id);
  });
}

/**
 * Waits until no connection named `application` runs a statement in the database of `url`: a
 * closed HTTP connection does not stop the platform's work on it, and leftovers would run into
 * the next measurement.
 */
export async function waitUntilIdle(url: string, application: string, timeoutMs = 300_000): Promise<void> {
  await withSql(url, async (sql) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await sql<{ busy: number }[]>`
        select count(*)::int as busy from pg_stat_activity
        where application_name = ${application} and datname = current_database() and state <> 'idle'`;
      if (row!.busy === 0) return;
      if (Date.now() > deadline) throw new Error(`${application} still had ${row!.busy} statements running after ${timeoutMs / 1000} s`);
      await sleep(100);
    }
  });
}
