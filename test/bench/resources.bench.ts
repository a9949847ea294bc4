/**
 * Resources benchmark (`npm run bench:resources`): throughput and latency of GET-by-id and of a
 * filtered, sorted list through the REST edge (wrk over HTTP), against pgbench baselines on the
 * same PostgreSQL: `pgbench -S`, and pgbench replaying the exact statements the platform sends per
 * request; and the same list of a tenant type that declares its fields in `indexes`, against the
 * GET-by-id rate, each also with one request in ten creating a resource of the listed type.
 * `BENCH_CURVE=1` adds the list's cost curve at 10k and 100k rows of one tenant beside 1 000 small
 * tenants (`BENCH_CURVE_1M=1`: and at 1M; seeding it takes minutes). Settings: BENCH_SECONDS (15), BENCH_WARMUP_SECONDS (5), BENCH_CONNECTIONS (32),
 * BENCH_THREADS (2), BENCH_ROWS (100000). A measurement: it exits 0 whether targets are met or not.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import type { ListOptions } from '../../control-plane/resources/list-statements.ts';
import { CHANGED_SINCE_SQL } from '../../control-plane/resources/resources.repo.ts';
import { startPlatform, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { createDatabase } from '../../scripts/stack/postgres.ts';
import {
  BENCH_DATABASES,
  benchCluster,
  createIdSet,
  createPlatformDatabase,
  dropBenchDatabases,
  ID_TABLE,
  loadProjects,
  tenantLoginOf,
  waitUntilIdle,
  withSql,
  type BenchCluster,
} from './bench-db.ts';
import { start } from './child.ts';
import { localPostmasterOf } from './cpu.ts';
import { awaitIndexes, createIndexedType, INDEXED_TYPE } from './indexed-type.ts';
import { costCurve, LIST_WRITES_SCRIPT, WRITE_EVERY, writeBody } from './list-load.ts';
import { findPgbench, initPgbench, mixed, replayScript, runPgbench, withRandomId, type PgbenchScripts } from './pgbench.ts';
import { ratiosTable, resultsTable, type Row } from './report.ts';
import {
  captureFromServerLog,
  compareStatements,
  getStatementsFromCode,
  listStatementsFromCode,
  PLATFORM_APP,
  type RequestContext,
  type Statement,
} from './statements.ts';
import { readSettings, runBenchmark, type Settings } from './settings.ts';
import { ensureWrk, runWrk } from './wrk.ts';

/** The runtime serving the platform in this process: Bun under `npm run bench:resources`, as `npm start` runs it. */
const runtimeVersion = () => {
  const bun = (process.versions as Record<string, string | undefined>).bun;
  return bun ? `Bun ${bun}` : `node ${process.version}`;
};

const TENANT = 'acme';
const USER = 'admin@acme.test';
const V3 = '/api/svc/v3';
/** Existing ids that GET-by-id rotates over, through wrk and pgbench alike. */
const ID_COUNT = 10_000;
/** pgbench draws a new random id once in this many transactions (see withRandomId). */
const ID_LOOKUP_EVERY = 50;
const PGBENCH_SCALE = 10;
const UNLIMITED = { points: 1e9, durationSeconds: 60 };
const RATE_LIMIT_PREFIX = 'bench';

const LIST_QUERY: ListOptions = {
  type: 'project',
  filter: { status: 'active', 'budget.gte': '1000' },
  sort: '-budget,createdAt',
  limit: 20,
};


/** The running platform with its data loaded, and a real token for it. */
interface Stage {
  cluster: BenchCluster;
  dbUrl: string;
  platform: RunningPlatform;
  token: string;
  ids: string[];
  tenantId: string;
  /** The key of the tenant's type that declares the list's fields in `indexes` (indexed-type.ts). */
  indexedKey: string;
}

/** Paths of the load generators. */
interface Tools {
  wrk: string;
  pgbench: string;
}

interface ExactStatements {
  statements: Statement[];
  /** How they were obtained. */
  source: string;
}

interface ServerFacts {
  version: string;
  /** The postmaster's pid when PostgreSQL runs on this machine. */
  postmaster?: number;
  /** Connections the platform's pools hold open. */
  platformConnections: number;
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);



function listPath(options: ListOptions): string {
  const params = new URLSearchParams({ type: options.type });
  for (const [field, value] of Object.entries(options.filter)) params.set(`filter[${field}]`, value);
  if (options.sort) params.set('sort', options.sort);
  params.set('limit', String(options.limit));
  return `${V3}/resources?${params}`;
}

const getPath = (id: string) => `${V3}/resources/project/${id}`;

/**
 * A fresh, migrated database with the development seed and `rows` projects of tenant acme, the
 * platform running in-process on it with rate limits out of the way, and a token from its
 * built-in provider (authorization code + PKCE, as a browser gets one).
 */
async function stage(cluster: BenchCluster, settings: Settings, started: (platform: RunningPlatform) => void): Promise<Stage> {
  log('creating and migrating the benchmark database');
  const dbUrl = await createPlatformDatabase(cluster.adminUrl);
  const platform = await startPlatform({
    role: 'all',
    databaseUrl: dbUrl,
    tenantDatabaseUrl: await tenantLoginOf(cluster, dbUrl),
    port: 0,
    seedDevelopmentData: true,
    rateLimits: { keyPrefix: RATE_LIMIT_PREFIX, policies: { resources: UNLIMITED, users: UNLIMITED, anonymous: UNLIMITED } },
    log: (message, detail) => log(`platform: ${message} ${detail instanceof Error ? detail.stack : String(detail ?? '')}`),
  });
  started(platform);
  log(`loading ${settings.rows} projects for tenant ${TENANT}`);
  await loadProjects(dbUrl, TENANT, settings.rows);
  const ids = await createIdSet(dbUrl, TENANT, ID_COUNT);
  const token = (await loginWithPkce({ issuer: platform.url, email: USER })).accessToken;
  const indexedKey = await createIndexedType(platform.url, token);
  log(`loading ${settings.rows} projects of ${indexedKey}, which declares ${INDEXED_TYPE.indexes.join(' and ')} in indexes`);
  await loadProjects(dbUrl, TENANT, settings.rows, indexedKey);
  const tenantId = await withSql(dbUrl, async (sql) => (await sql<{ id: string }[]>`select id::text as id from tenants where slug = ${TENANT}`)[0]!.id);
  await awaitIndexes(platform.url, token, tenantId, indexedKey, log);
  await checkWorkloads(platform.url, token, ids[0]!, indexedKey);
  return { cluster, dbUrl, platform, token, ids, tenantId, indexedKey };
}

/** Fails fast unless every workload answers 200 with the expected shape. */
async function checkWorkloads(url: string, token: string, id: string, indexedKey: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}` };
  const got = await fetch(url + getPath(id), { headers });
  const item = (await got.json()) as { id?: string };
  if (got.status !== 200 || item.id !== id) throw new Error(`GET-by-id answered ${got.status}: ${JSON.stringify(item)}`);
  for (const type of [LIST_QUERY.type, indexedKey]) {
    const listed = await fetch(url + listPath({ ...LIST_QUERY, type }), { headers });
    const page = (await listed.json()) as { data?: unknown[] };
    if (listed.status !== 200 || page.data?.length !== LIST_QUERY.limit) {
      throw new Error(`list of ${type} answered ${listed.status}: ${JSON.stringify(page).slice(0, 300)}`);
    }
  }
}

async function requestContext(dbUrl: string, tenantId: string): Promise<RequestContext & { schema: object; snapshot: string }> {
  return withSql(dbUrl, async (sql) => {
    const [type] = await sql<{ schema: object }[]>`select schema from object_types where key = 'project' and tenant_id is null`;
    const [current] = await sql<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
    return {
      snapshot: current!.snapshot,
      tenantId,
      rateLimitPrefix: RATE_LIMIT_PREFIX,
      rateLimitKey: `tenant:${TENANT}`,
      rateLimitPolicy: UNLIMITED,
      schema: type!.schema,
    };
  });
}

/**
 * The statements one request sends: captured from the server log when the benchmark runs its own
 * cluster (and compared with what the code says), otherwise derived from the code.
 */
async function exactStatements(cluster: BenchCluster, derived: Statement[], send: () => Promise<void>): Promise<ExactStatements> {
  if (!cluster.logFile) return { statements: derived, source: 'derived from the code (DATABASE_URL is set: no server log to read)' };
  await send();
  const captured = await captureFromServerLog(cluster.adminUrl, cluster.logFile, send);
  if (captured.length === 0) throw new Error(`no statement of the platform was found in ${cluster.logFile}`);
  const differences = compareStatements(captured, derived);
  const check = differences.length ? `DIFFERS from the code-derived ones: ${differences.join('; ')}` : 'identical to the code-derived ones';
  return { statements: captured, source: `captured from the server log (log_statement = 'all'), ${check}` };
}

/** Both workloads' exact statements, printed as they will be replayed. */
async function exactWorkloads({ cluster, dbUrl, platform, token, ids, tenantId }: Stage): Promise<{ get: ExactStatements; list: ExactStatements }> {
  const context = await requestContext(dbUrl, tenantId);
  const fetchText = async (path: string) => void (await (await fetch(platform.url + path, { headers: { authorization: `Bearer ${token}` } })).text());
  const get = await exactStatements(cluster, await getStatementsFromCode(context, 'project', ids[0]!), () => fetchText(getPath(ids[0]!)));
  const list = await exactStatements(cluster, await listStatementsFromCode(context, LIST_QUERY, context.schema, context.snapshot), () => fetchText(listPath(LIST_QUERY)));
  printStatements('GET-by-id', get);
  printStatements('list', list);
  return { get, list };
}

function printStatements(name: string, { statements, source }: ExactStatements): void {
  console.log(`\n-- ${name}: statements per request, in order; ${source}`);
  for (const s of statements) console.log(`${s.sql.trim().replace(/\s+/g, ' ')}\n     params: ${JSON.stringify(s.params)}`);
}

/**
 * A request's statements as pgbench scripts: with the rate-limit upsert in `upsertShare` of the
 * transactions and without it in the rest, the share the platform's own measured run wrote (all of
 * them today: one count per request), so the replay follows what was sent rather than what one
 * request alone sends. `pipelineOf` marks statements sent back to back.
 */
function replayMix(
  statements: Statement[],
  upsertShare: number,
  options: { vary?: { value: string; variable: string }; pipelineOf?: (statements: Statement[]) => [number, number] | undefined } = {},
): PgbenchScripts {
  const upsertAt = statements.findIndex((s) => /\brate_limits\b/i.test(s.sql));
  const script = (list: Statement[], prefix: string) => replayScript(list, { vary: options.vary, pipeline: options.pipelineOf?.(list), prefix });
  if (upsertAt < 0) return mixed([{ ...script(statements, 's'), share: 1 }]);
  return mixed([
    { ...script(statements, 'u'), share: upsertShare },
    { ...script(statements.filter((_, i) => i !== upsertAt), 'r'), share: 1 - upsertShare },
  ]);
}

/** The list's page and the history's question, pipelined as list-totals.ts sends them. */
function listPipeline(statements: Statement[]): [number, number] | undefined {
  const questionAt = statements.findIndex((s) => s.sql.trim() === CHANGED_SINCE_SQL.trim());
  return questionAt > 0 ? [questionAt - 1, questionAt] : undefined;
}

/** GET-by-id replayed with a random id of the set; the list with its page and the history's question pipelined. */
function replays(exact: { get: ExactStatements; list: ExactStatements }, ids: string[], upsertShare: { get: number; list: number }): { get: PgbenchScripts; list: PgbenchScripts } {
  const get = withRandomId(replayMix(exact.get.statements, upsertShare.get, { vary: { value: ids[0]!, variable: 'id' } }), {
    table: ID_TABLE,
    count: ids.length,
    variable: 'id',
    every: ID_LOOKUP_EVERY,
  });
  return { get, list: replayMix(exact.list.statements, upsertShare.list, { pipelineOf: listPipeline }) };
}

/** PostgreSQL's statistics reach the views about once a second after a connection goes idle. */
const STATS_SETTLE_MS = 2_000;

/** Rows the rate limiters have written (inserted or updated) in `rate_limits` so far, from PostgreSQL's statistics. */
async function rateLimitWrites(dbUrl: string): Promise<number> {
  await sleep(STATS_SETTLE_MS);
  return withSql(dbUrl, async (sql) => {
    const [row] = await sql<{ writes: string }[]>`select (n_tup_ins + n_tup_upd)::text as writes from pg_stat_user_tables where relname = 'rate_limits'`;
    return Number(row!.writes);
  });
}

async function serverFacts(dbUrl: string): Promise<ServerFacts> {
  return withSql(dbUrl, async (sql) => {
    const [row] = await sql<{ version: string; pid: number; connections: number }[]>`
      select current_setting('server_version') as version, pg_backend_pid() as pid,
        (select count(*)::int from pg_stat_activity where application_name = ${PLATFORM_APP} and datname = current_database()) as connections`;
    return { version: row!.version, postmaster: localPostmasterOf(row!.pid), platformConnections: row!.connections };
  });
}

/** Runs every workload, each as a warm-up run and then the measured one; returns the table rows. */
async function measureAll(s: Stage, settings: Settings, { wrk, pgbench }: Tools, workDir: string): Promise<{ rows: Record<string, Row>; server: ServerFacts }> {
  const { seconds, warmupSeconds, connections, threads } = settings;
  const exact = await exactWorkloads(s);
  const getPaths = join(workDir, 'get-paths.txt');
  const listPaths = join(workDir, 'list-paths.txt');
  const indexedListPaths = join(workDir, 'indexed-list-paths.txt');
  await writeFile(getPaths, `${s.ids.map(getPath).join('\n')}\n`);
  await writeFile(listPaths, `${listPath(LIST_QUERY)}\n`);
  await writeFile(indexedListPaths, `${listPath({ ...LIST_QUERY, type: s.indexedKey })}\n`);
  const { postmaster } = await serverFacts(s.dbUrl);

  const edge = async (pathsFile: string, creates?: { type: string }) => {
    const script = creates ? { script: LIST_WRITES_SCRIPT, scriptArgs: [`${V3}/resources/${creates.type}`, await writeBody(workDir, 'v3'), String(WRITE_EVERY)] } : {};
    const run = async (duration: number) => {
      const result = await runWrk(wrk, { url: s.platform.url, token: s.token, pathsFile, connections, threads, seconds: duration, postmaster, ...script });
      await waitUntilIdle(s.dbUrl, PLATFORM_APP);
      return result;
    };
    await run(warmupSeconds);
    const writesBefore = await rateLimitWrites(s.dbUrl);
    const result = await run(seconds);
    const writes = (await rateLimitWrites(s.dbUrl)) - writesBefore;
    // Requests still in flight when wrk stops have written their counts but are not among its requests: whole percents.
    return { ...result, rateLimitWrites: writes, upsertShare: Math.min(1, Math.round((writes / result.requests) * 100) / 100) };
  };
  const sql = async (url: string, workload: PgbenchScripts | 'select-only') => {
    const run = (duration: number, percentiles: boolean) =>
      runPgbench(pgbench, { url, clients: connections, threads, seconds: duration, scripts: workload, percentiles, postmaster });
    await run(warmupSeconds, false);
    return run(seconds, true);
  };

  log(`GET-by-id through the edge: wrk, ${connections} connections, ${threads} threads, ${warmupSeconds} s warm-up + ${seconds} s`);
  const edgeGet = await edge(getPaths);
  log('list through the edge');
  const edgeList = await edge(listPaths);
  log(`list of ${s.indexedKey}, which declares the fields in indexes, through the edge`);
  const edgeIndexedList = await edge(indexedListPaths);
  log(`the list of project while one request in ${WRITE_EVERY} creates a project`);
  const edgeListWrites = await edge(listPaths, { type: 'project' });
  log(`the list of ${s.indexedKey} while one request in ${WRITE_EVERY} creates one`);
  const edgeIndexedListWrites = await edge(indexedListPaths, { type: s.indexedKey });
  const server = await serverFacts(s.dbUrl);
  const scripts = replays(exact, s.ids, { get: edgeGet.upsertShare, list: edgeList.upsertShare });
  for (const [name, run] of [['GET-by-id', edgeGet], ['list', edgeList]] as const) {
    console.log(
      `\n-- ${name}: the platform wrote ${run.rateLimitWrites} rate-limit counts for ${run.requests} requests in its measured run; ` +
        `the exact-SQL replay sends the upsert in ${(run.upsertShare * 100).toFixed(1)}% of its reported transactions`,
    );
  }
  log('GET-by-id exact SQL: pgbench');
  const sqlGet = await sql(s.dbUrl, scripts.get);
  log('list exact SQL: pgbench');
  const sqlList = await sql(s.dbUrl, scripts.list);
  log(`pgbench -S: initialising scale ${PGBENCH_SCALE} in database ${BENCH_DATABASES.pgbench}`);
  const pgbenchUrl = await createDatabase(s.cluster.adminUrl, BENCH_DATABASES.pgbench);
  await initPgbench(pgbench, pgbenchUrl, PGBENCH_SCALE);
  const selectOnly = await sql(pgbenchUrl, 'select-only');

  const row = (workload: string, tool: string, result: Row['result']): Row => ({ workload, tool, connections, result });
  return {
    server,
    rows: {
      edgeGet: row('GET-by-id (edge)', 'wrk', edgeGet),
      sqlGet: row('GET-by-id exact SQL', 'pgbench', sqlGet),
      selectOnly: row(`pgbench -S (scale ${PGBENCH_SCALE})`, 'pgbench', selectOnly),
      edgeList: row('list (edge)', 'wrk', edgeList),
      sqlList: row('list exact SQL', 'pgbench', sqlList),
      edgeIndexedList: row('list, declared indexes (edge)', 'wrk', edgeIndexedList),
      edgeListWrites: row(`list + 1/${WRITE_EVERY} creates (edge)`, 'wrk', edgeListWrites),
      edgeIndexedListWrites: row(`list, declared indexes + 1/${WRITE_EVERY} creates (edge)`, 'wrk', edgeIndexedListWrites),
    },
  };
}

async function printReport(rows: Record<string, Row>, server: ServerFacts, settings: Settings, tools: Tools): Promise<void> {
  const wrkVersion = (await start(tools.wrk, ['-v']).finished).output.split(' ').slice(0, 2).join(' ');
  console.log(`\nmachine: nproc ${availableParallelism()}, ${runtimeVersion()}, PostgreSQL ${server.version}, ${wrkVersion}`);
  console.log(
    `load: ${settings.connections} connections (wrk) and clients (pgbench), ${settings.threads} threads, ` +
      `${settings.seconds} s measured after ${settings.warmupSeconds} s warm-up; ${settings.rows} projects, ${ID_COUNT} ids; ` +
      `the platform's pools held ${server.platformConnections} PostgreSQL connections`,
  );
  console.log(
    'exact SQL: pgbench -M prepared; a ":" inside a string literal is written \\x3A in an E\'\' literal (pgbench reads :MI as a variable); ' +
      'a variable used twice becomes two parameters; GET-by-id draws a random id from bench_ids in a separate, uncounted ' +
      `transaction once in ${ID_LOOKUP_EVERY}`,
  );
  console.log('cpu% = percent of one core over the middle of each run: the platform process (edge and control plane) / PostgreSQL / load generator / other processes\n');
  console.log(resultsTable(Object.values(rows)));
  console.log();
  console.log(
    ratiosTable([
      { label: 'GET-by-id edge / pgbench -S', numerator: rows.edgeGet!, denominator: rows.selectOnly!, target: 0.2 },
      { label: 'GET-by-id edge / exact SQL', numerator: rows.edgeGet!, denominator: rows.sqlGet!, target: 0.85 },
      { label: 'list edge / exact SQL', numerator: rows.edgeList!, denominator: rows.sqlList! },
      { label: 'list (built-in project) edge / GET-by-id edge', numerator: rows.edgeList!, denominator: rows.edgeGet!, target: 0.05 },
      { label: 'list (declared indexes) edge / GET-by-id edge', numerator: rows.edgeIndexedList!, denominator: rows.edgeGet!, target: 0.05 },
      { label: `list + 1/${WRITE_EVERY} creates / GET-by-id edge`, numerator: rows.edgeListWrites!, denominator: rows.edgeGet!, target: 0.03 },
      { label: `list (declared indexes) + 1/${WRITE_EVERY} creates / GET-by-id edge`, numerator: rows.edgeIndexedListWrites!, denominator: rows.edgeGet!, target: 0.03 },
    ]),
  );
}

async function main(): Promise<void> {
  const settings = readSettings();
  const tools = { wrk: await ensureWrk(log), pgbench: findPgbench() };
  const cluster = await benchCluster(log);
  const workDir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  let platform: RunningPlatform | undefined;
  try {
    const staged = await stage(cluster, settings, (started) => (platform = started));
    const { rows, server } = await measureAll(staged, settings, tools, workDir);
    await printReport(rows, server, settings, tools);
    if (process.env.BENCH_CURVE) {
      await costCurve({ ...staged, slug: TENANT, listPath: listPath(LIST_QUERY), wrk: tools.wrk, settings, workDir, log, withMillion: !!process.env.BENCH_CURVE_1M });
    }
  } finally {
    await platform?.close().catch((error: Error) => log(`closing the platform failed: ${error.message}`));
    await dropBenchDatabases(cluster.adminUrl).catch((error: Error) => log(`dropping the databases failed: ${error.message}`));
    await rm(workDir, { recursive: true, force: true });
  }
}

await runBenchmark(main);
