/**
 * v4 data benchmark (`npm run bench:v4`): GET-by-id, PUT at a version, an aggregate over the
 * tenant's projects, and a filtered, sorted list of a type that declares its fields in `indexes`,
 * through the REST edge (wrk over HTTP), each against pgbench replaying the
 * exact statements the platform sent for one such request, captured from the server log of the
 * benchmark's own PostgreSQL, in the same run, and that list again while one request in ten creates
 * a resource of its type (`BENCH_CURVE=1`: the built-in project's list at 10k and 100k rows of one
 * tenant beside 1 000 small ones; `BENCH_CURVE_1M=1`: and 1M). Settings: BENCH_SECONDS (15), BENCH_WARMUP_SECONDS
 * (5), BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_ROWS (100000). A measurement: it exits 0
 * whether targets are met or not.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { REPLACE_AT_TYPE_VERSION_SQL } from '../../control-plane/resources/resources.repo.ts';
import { startPlatform, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { benchCluster, createIdSet, createPlatformDatabase, dropBenchDatabases, ID_TABLE, loadProjects, tenantLoginOf, waitUntilIdle, withSql } from './bench-db.ts';
import { localPostmasterOf } from './cpu.ts';
import { awaitIndexes, createIndexedType, INDEXED_TYPE } from './indexed-type.ts';
import { costCurve, LIST_WRITES_SCRIPT, WRITE_EVERY, writeBody } from './list-load.ts';
import { findPgbench, mixed, runPgbench, toPgbenchSql, withRandomId, type PgbenchScripts } from './pgbench.ts';
import { ratiosTable, resultsTable, type Row } from './report.ts';
import { captureFromServerLog, PLATFORM_APP, type Statement } from './statements.ts';
import { readSettings, runBenchmark } from './settings.ts';
import { ensureWrk, runWrk } from './wrk.ts';

const TENANT = 'acme';
const USER = 'admin@acme.test';
const ID_COUNT = 10_000;
const ID_LOOKUP_EVERY = 50;
const UNLIMITED = { points: 1e9, durationSeconds: 60 };
const PUT_SCRIPT = fileURLToPath(new URL('./put-versioned.lua', import.meta.url));
/**
 * The list that declared indexes must serve, on a type that declares `status` and `budget` in
 * `indexes` (indexed-type.ts): active projects with a budget of at least 1000, the most expensive
 * first, 20 per page, with the exact total.
 */
const INDEXED_LIST = `where=${encodeURIComponent(JSON.stringify({ status: 'active', budget: { gte: 1000 } }))}&sort=-budget,createdAt&limit=20`;

/** The aggregate measured: projects per status with their budget's sum and average. */
const AGGREGATE = { groupBy: ['status'], metrics: { n: { count: '*' }, total: { sum: 'budget' }, mean: { avg: 'budget' } } };

const log = (message: string) => process.stderr.write(`[bench:v4] ${message}\n`);


const settings = readSettings();

/**
 * A captured request as a pgbench script: parameters become `-D` variables, `id` the variable
 * the id lookup sets, a NULL parameter the literal NULL (pgbench passes none), and `gset` marks
 * statements whose row sets variables for later ones (`versionAt` names the version parameters,
 * `unnamedAt` the parameters replayed as NULL).
 */
function replay(
  statements: Statement[],
  options: {
    id?: string;
    gset?: (statement: Statement) => boolean;
    versionAt?: (statement: Statement, param: number) => boolean;
    unnamedAt?: (statement: Statement, param: number) => boolean;
  } = {},
): PgbenchScripts {
  const variables: Record<string, string> = {};
  const lines = statements.map((statement, i) => {
    const names = statement.params.map((value, j) => {
      if (value === null || options.unnamedAt?.(statement, j)) return 'NULL_PARAM';
      if (options.versionAt?.(statement, j)) {
        variables.version ??= value;
        return 'version';
      }
      if (options.id !== undefined && value === options.id) {
        variables.id = value;
        return 'id';
      }
      variables[`p${i}_${j}`] = value;
      return `p${i}_${j}`;
    });
    const text = toPgbenchSql(statement.sql, names).replaceAll(':NULL_PARAM', 'NULL');
    return options.gset?.(statement) ? `${text.replace(/;$/, '')} \\gset` : text;
  });
  return mixed([{ text: `${lines.join('\n')}\n`, variables, share: 1 }]);
}

/** The plans PostgreSQL ran the statements with, as the tenant under row-level security (EXPLAIN ANALYZE, rolled back). */
async function printPlans(dbUrl: string, tenantId: string, statements: Statement[]): Promise<void> {
  await withSql(dbUrl, (sql) =>
    sql
      .begin(async (tx) => {
        await tx`select set_config('svc.tenant_id', ${tenantId}, true), set_config('role', 'svc_app', true)`;
        for (const statement of statements) {
          const plan = await tx.unsafe<Array<{ 'QUERY PLAN': string }>>(`explain (analyze, costs off) ${statement.sql}`, statement.params as never[]);
          console.log(`\n-- plan of: ${statement.sql.trim().replace(/\s+/g, ' ').slice(0, 120)}...\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`);
        }
        throw new Error('roll back');
      })
      .catch((error: Error) => {
        if (error.message !== 'roll back') throw error;
      }),
  );
}

async function main(): Promise<void> {
  const tools = { wrk: await ensureWrk(log), pgbench: findPgbench() };
  const cluster = await benchCluster(log);
  if (!cluster.logFile) throw new Error('bench:v4 replays the statements it captures from its own PostgreSQL log: run it without DATABASE_URL');
  const workDir = await mkdtemp(join(tmpdir(), 'svc-bench-v4-'));
  let platform: RunningPlatform | undefined;
  try {
    log('creating and migrating the benchmark database');
    const dbUrl = await createPlatformDatabase(cluster.adminUrl);
    // A project's write projects it for full-text search in its transaction (its type declares
    // searchFields) and embeds it afterwards, apart from the request: without vectors, the statements
    // captured and replayed are the request's own.
    process.env.SEARCH_VECTORS ??= 'off';
    platform = await startPlatform({
      role: 'all',
      databaseUrl: dbUrl,
      tenantDatabaseUrl: await tenantLoginOf(cluster, dbUrl),
      port: 0,
      seedDevelopmentData: true,
      rateLimits: { keyPrefix: 'bench-v4', policies: { resources: UNLIMITED, users: UNLIMITED, anonymous: UNLIMITED } },
      log: (message, detail) => log(`platform: ${message} ${detail instanceof Error ? detail.stack : String(detail ?? '')}`),
    });
    log(`loading ${settings.rows} projects for tenant ${TENANT}`);
    await loadProjects(dbUrl, TENANT, settings.rows);
    const ids = await createIdSet(dbUrl, TENANT, ID_COUNT);
    const token = (await loginWithPkce({ issuer: platform.url, email: USER })).accessToken;
    const indexedKey = await createIndexedType(platform.url, token);
    log(`loading ${settings.rows} projects of ${indexedKey}, which declares ${INDEXED_TYPE.indexes.join(' and ')} in indexes`);
    await loadProjects(dbUrl, TENANT, settings.rows, indexedKey);
    const { tenantId, postmaster } = await withSql(dbUrl, async (sql) => {
      const [row] = await sql<{ id: string; pid: number }[]>`select id::text as id, pg_backend_pid() as pid from tenants where slug = ${TENANT}`;
      return { tenantId: row!.id, postmaster: localPostmasterOf(row!.pid) };
    });
    const base = `/v4/data/resources/${tenantId}/project`;
    await awaitIndexes(platform.url, token, tenantId, indexedKey, log);
    const indexedList = `/v4/data/resources/${tenantId}/${indexedKey}?${INDEXED_LIST}`;
    const send = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(platform!.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text) as { version?: number };
    };

    // One request of each workload, its statements captured as PostgreSQL received them.
    const putBody = (version: number) => ({ data: { name: 'bench', status: 'active', budget: 1000 }, version });
    const capture = async (name: string, request: () => Promise<unknown>) => {
      await request();
      const statements = await captureFromServerLog(cluster.adminUrl, cluster.logFile!, async () => void (await request()));
      console.log(`\n-- ${name}: statements per request, in order, captured from the server log`);
      for (const s of statements) console.log(`${s.sql.trim().replace(/\s+/g, ' ')}\n     params: ${JSON.stringify(s.params)}`);
      return statements;
    };
    const getStatements = await capture('GET-by-id', () => send('GET', `${base}/${ids[0]}`));
    let putVersion = 1;
    const putStatements = await capture('PUT at a version', async () => (putVersion = (await send('PUT', `${base}/${ids[1]}`, putBody(putVersion))).version!));
    const aggregateStatements = await capture('aggregate', () => send('POST', `${base}/aggregate`, AGGREGATE));
    const listStatements = await capture('list with declared indexes', () => send('GET', indexedList));
    await printPlans(dbUrl, tenantId, listStatements.filter((st) => /^\s*select\b/i.test(st.sql) && /\bfrom resources\b/i.test(st.sql)));

    // A PUT whose type the platform knows is one statement with its history entry (REPLACE_AT_TYPE_VERSION_SQL); else the update and the entry.
    const isUpdate = (s: Statement) => /^\s*update resources\b/i.test(s.sql) || s.sql.trim() === REPLACE_AT_TYPE_VERSION_SQL.trim();
    const isHistory = (s: Statement) => /^\s*insert into resource_versions\b/i.test(s.sql);
    const lookup = { table: ID_TABLE, count: ids.length, variable: 'id', every: ID_LOOKUP_EVERY };
    const scripts = {
      get: withRandomId(replay(getStatements, { id: ids[0] }), lookup),
      // The client names the version it read, which the replay cannot know: its update names none
      // (the same statement, which then skips comparing the version). The update's row gives a
      // separate history entry its version.
      put: withRandomId(
        replay(putStatements, {
          id: ids[1],
          gset: isUpdate,
          unnamedAt: (s, param) => isUpdate(s) && param === 3,
          versionAt: (s, param) => isHistory(s) && param === 2,
        }),
        lookup,
      ),
      aggregate: replay(aggregateStatements),
      list: replay(listStatements),
    };

    const files = {
      get: join(workDir, 'get-paths.txt'),
      put: join(workDir, 'put-paths.txt'),
      aggregate: join(workDir, 'aggregate-paths.txt'),
      aggregateBody: join(workDir, 'aggregate.json'),
      list: join(workDir, 'list-paths.txt'),
    };
    await writeFile(files.list, `${indexedList}\n`);
    await writeFile(files.get, `${ids.map((id) => `${base}/${id}`).join('\n')}\n`);
    await writeFile(files.aggregate, `${base}/aggregate\n`);
    await writeFile(files.aggregateBody, JSON.stringify(AGGREGATE));
    const { seconds, warmupSeconds, connections, threads } = settings;

    const edge = async (name: string, options: { pathsFile: string; method?: string; bodyFile?: string; script?: string; scriptArgs?: string[] }, before?: () => Promise<void>) => {
      log(`${name} through the edge: wrk, ${connections} connections, ${threads} threads, ${warmupSeconds} s warm-up + ${seconds} s`);
      const run = async (duration: number) => {
        await before?.();
        const result = await runWrk(tools.wrk, { url: platform!.url, token, connections, threads, seconds: duration, postmaster, ...options });
        await waitUntilIdle(dbUrl, PLATFORM_APP);
        return result;
      };
      await run(warmupSeconds);
      return run(seconds);
    };
    // Each PUT run starts from the versions stored then.
    const writePutPaths = async () => {
      const rows = await withSql(dbUrl, (sql) => sql<{ id: string; version: number }[]>`
        select r.id::text as id, r.version from resources r join ${sql(ID_TABLE)} b on b.id = r.id`);
      await writeFile(files.put, `${rows.map((r) => `${base}/${r.id} ${r.version}`).join('\n')}\n`);
    };
    const sqlRun = async (name: string, workload: PgbenchScripts) => {
      log(`${name} exact SQL: pgbench`);
      const run = (duration: number, percentiles: boolean) =>
        runPgbench(tools.pgbench, { url: dbUrl, clients: connections, threads, seconds: duration, scripts: workload, percentiles, postmaster });
      await run(warmupSeconds, false);
      return run(seconds, true);
    };

    const row = (workload: string, tool: string, result: Row['result']): Row => ({ workload, tool, connections, result });
    const rows = {
      edgeGet: row('GET-by-id (edge)', 'wrk', await edge('GET-by-id', { pathsFile: files.get })),
      sqlGet: row('GET-by-id exact SQL', 'pgbench', await sqlRun('GET-by-id', scripts.get)),
      edgePut: row('PUT at a version (edge)', 'wrk', await edge('PUT at a version', { pathsFile: files.put, script: PUT_SCRIPT, scriptArgs: [String(threads)] }, writePutPaths)),
      sqlPut: row('PUT at a version exact SQL', 'pgbench', await sqlRun('PUT at a version', scripts.put)),
      edgeAggregate: row('aggregate (edge)', 'wrk', await edge('aggregate', { pathsFile: files.aggregate, method: 'POST', bodyFile: files.aggregateBody })),
      sqlAggregate: row('aggregate exact SQL', 'pgbench', await sqlRun('aggregate', scripts.aggregate)),
      edgeList: row('list, declared indexes (edge)', 'wrk', await edge('list with declared indexes', { pathsFile: files.list })),
      sqlList: row('list, declared indexes exact SQL', 'pgbench', await sqlRun('list with declared indexes', scripts.list)),
      edgeListWrites: row(
        `list, declared indexes + 1/${WRITE_EVERY} creates (edge)`,
        'wrk',
        await edge(`list with declared indexes while one request in ${WRITE_EVERY} creates`, {
          pathsFile: files.list,
          script: LIST_WRITES_SCRIPT,
          scriptArgs: [`/v4/data/resources/${tenantId}/${indexedKey}`, await writeBody(workDir, 'v4'), String(WRITE_EVERY)],
        }),
      ),
    };

    const version = await withSql(dbUrl, async (sql) => (await sql<{ v: string }[]>`select current_setting('server_version') as v`)[0]!.v);
    const bun = (process.versions as Record<string, string | undefined>).bun;
    console.log(`\nmachine: nproc ${availableParallelism()}, ${bun ? `Bun ${bun}` : `node ${process.version}`}, PostgreSQL ${version}`);
    console.log(`load: ${connections} connections (wrk) and clients (pgbench), ${threads} threads, ${seconds} s measured after ${warmupSeconds} s warm-up; ${settings.rows} projects, ${ID_COUNT} ids`);
    console.log('cpu% = percent of one core over the middle of each run: the platform process / PostgreSQL / load generator / other processes\n');
    console.log(resultsTable(Object.values(rows)));
    console.log();
    console.log(
      ratiosTable([
        { label: 'GET-by-id edge / exact SQL', numerator: rows.edgeGet, denominator: rows.sqlGet, target: 0.85 },
        { label: 'PUT at a version edge / exact SQL', numerator: rows.edgePut, denominator: rows.sqlPut, target: 0.85 },
        { label: 'aggregate edge / exact SQL', numerator: rows.edgeAggregate, denominator: rows.sqlAggregate },
        { label: 'list (declared indexes) edge / GET-by-id edge', numerator: rows.edgeList, denominator: rows.edgeGet, target: 0.05 },
        { label: 'list (declared indexes) edge / exact SQL', numerator: rows.edgeList, denominator: rows.sqlList },
        { label: `list (declared indexes) + 1/${WRITE_EVERY} creates / GET-by-id edge`, numerator: rows.edgeListWrites, denominator: rows.edgeGet, target: 0.03 },
      ]),
    );
    if (process.env.BENCH_CURVE) {
      await costCurve({ dbUrl, platform, token, slug: TENANT, listPath: `/v4/data/resources/${tenantId}/project?${INDEXED_LIST}`, wrk: tools.wrk, settings, workDir, log, withMillion: !!process.env.BENCH_CURVE_1M });
    }
  } finally {
    await platform?.close().catch((error: Error) => log(`closing the platform failed: ${error.message}`));
    await dropBenchDatabases(cluster.adminUrl).catch((error: Error) => log(`dropping the databases failed: ${error.message}`));
    await rm(workDir, { recursive: true, force: true });
  }
}

await runBenchmark(main);
