/**
 * Operator benchmark (`npm run bench:operator`): how fast the Kubernetes operator brings `Tenant`
 * objects to Ready (condition Ready=True) on a real kube-apiserver and etcd, with the platform's
 * worker and operator as two processes (as the chart deploys them), a Temporal dev server and
 * PostgreSQL. One Tenant, then batches applied at once (default 1, 100 and 1,000), then single
 * Tenants one after another while the batches exist. Targets: >= 20 Tenants/s per batch of 100 or
 * more, p99 apply->Ready of a single new Tenant < 5 s. Settings: BENCH_OPERATOR_SIZES (1,100,1000),
 * BENCH_OPERATOR_SINGLES (20), BENCH_OPERATOR_TIMEOUT_SECONDS (per batch; 120 + 1.2 per Tenant),
 * BENCH_CONCURRENCY (creates in flight, 16), BENCH_OPERATOR_SAMPLES (workflow histories broken
 * down per batch, 10), BENCH_PROFILE_DIR (the platform processes write V8 CPU profiles there),
 * BENCH_OPERATOR_KEEP (leave the Tenants in place), BENCH_VERBOSE. A measurement: it exits 0
 * whether targets are met or not.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { GROUP, kubeFromConfig, loadKubeConfig, statusOf, TENANTS, VERSION, type Kube } from '../../control-plane/operator/kube.ts';
import type { TenantObject } from '../../control-plane/operator/tenant-object.ts';
import { PROVISION_TENANT } from '../../control-plane/temporal/workflow-contract.ts';
import { ensureKubeApiServer, ensureKubeBinaries, KUBERNETES_VERSION, runKubectl, type KubeApiServer } from '../../scripts/stack/kubernetes.ts';
import { dropDatabase } from '../../scripts/stack/postgres.ts';
import { withLock } from '../../scripts/stack/process.ts';
import { stateDir } from '../../control-plane/app/state-dir.ts';
import { ensureSearchAttributes, ensureTemporalDevServer, PLATFORM_SEARCH_ATTRIBUTES } from '../../scripts/stack/temporal.ts';
import { apiServerRequests, requestsBetween, type RequestCounts } from './apiserver-metrics.ts';
import { benchCluster, benchDatabase, withSql } from './bench-db.ts';
import { start, tail, type Running } from './child.ts';
import { localPostmasterOf } from './cpu.ts';
import { clearTenants, createTenants, mapLimit, untilTenantsServed, watchReadiness, type ReadinessWatch } from './kube-tenants.ts';
import { quantile } from './latency.ts';
import { cpuBetween, cpuSnapshot, type GroupCpu, type ProcessGroups } from './process-cpu.ts';
import { provisionHistory, type ProvisionHistory } from './provision-history.ts';

/** The API server (and its etcd, on the next two ports) this benchmark uses; tests use 26443-26445 and 26463-26465. */
const BENCH_KUBE = { name: 'kube-bench-operator', port: 26473 } as const;
const BENCH_TEMPORAL = { name: 'temporal-bench', port: 27259 } as const;
const DATABASE = 'svc_bench_operator';
const CRDS_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));
const LEASE_NAMESPACE = 'default';
const TARGET_RATE = 20;
const TARGET_P99_MS = 5_000;
const CPU_GROUPS = ['operator', 'worker', 'postgres', 'temporal', 'apiserver', 'etcd', 'bench'] as const;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

interface Settings {
  sizes: number[];
  singles: number;
  timeoutSeconds?: number;
  concurrency: number;
  samples: number;
  profileDir?: string;
  keep: boolean;
}

function numberFromEnv(name: string, fallback: number, minimum = 1): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be an integer >= ${minimum}`);
  return value;
}

function readSettings(): Settings {
  const sizes = (process.env.BENCH_OPERATOR_SIZES ?? '1,100,1000').split(',').map((s) => Number(s.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('BENCH_OPERATOR_SIZES must be a list of positive integers, e.g. 1,100,1000');
  return {
    sizes,
    singles: numberFromEnv('BENCH_OPERATOR_SINGLES', 20, 0),
    timeoutSeconds: process.env.BENCH_OPERATOR_TIMEOUT_SECONDS ? numberFromEnv('BENCH_OPERATOR_TIMEOUT_SECONDS', 0) : undefined,
    concurrency: numberFromEnv('BENCH_CONCURRENCY', 16),
    samples: numberFromEnv('BENCH_OPERATOR_SAMPLES', 10, 0),
    profileDir: process.env.BENCH_PROFILE_DIR || undefined,
    keep: Boolean(process.env.BENCH_OPERATOR_KEEP),
  };
}

/** The servers and processes one run measures. */
interface Stage {
  dbUrl: string;
  kube: Kube;
  apiServer: KubeApiServer;
  temporal: Client;
  watch: ReadinessWatch;
  groups: ProcessGroups;
  settings: Settings;
}

/** Apply->Ready of each Tenant split at the moments the platform's database records. */
interface Stages {
  /** Create sent -> tenant row inserted: the operator's queue, its GET and finalizer patch, the insert. */
  pickup: number[];
  /** Row inserted -> tenant `active`: the provisioning workflow (roles, examples, storage, activation). */
  provisioning: number[];
  /** Tenant `active` -> Ready seen on the watch: the requeue poll, the queue, the status patch. */
  report: number[];
}

interface Result {
  workload: string;
  tenants: number;
  /** First create sent -> last create answered, s. */
  createSeconds: number;
  /** First create sent -> first and last Ready seen, s. */
  firstReadySeconds: number;
  allReadySeconds: number;
  /** Tenants per second over first create sent -> last Ready (sequential singles: Tenants / elapsed). */
  rate: number;
  /** Per Tenant, create sent -> Ready seen. */
  p50Ms: number;
  p99Ms: number;
  cpu: GroupCpu;
  requests: ReturnType<typeof requestsBetween>;
  /** PostgreSQL transactions committed in the platform's database per Tenant (statistics lag up to a second). */
  transactionsPerTenant: number;
  stages: Stages;
  histories: ProvisionHistory[];
  /** Whether the rate target applies (batches of 100 or more). */
  rateTarget: boolean;
  /** Whether the latency target applies (sequential singles among many). */
  latencyTarget: boolean;
  existing: number;
}

async function committedTransactions(url: string): Promise<number> {
  return withSql(url, async (sql) => {
    const [row] = await sql<{ n: string }[]>`select xact_commit::text as n from pg_stat_database where datname = current_database()`;
    return Number(row!.n);
  });
}

/** Counters read before and after a measured window. */
interface Counters {
  cpu: ReturnType<typeof cpuSnapshot>;
  requests: RequestCounts;
  transactions: number;
}

async function readCounters(stage: Stage): Promise<Counters> {
  const { apiServer } = stage;
  const [requests, transactions] = await Promise.all([
    apiServerRequests(apiServer.url, apiServer.token, apiServer.caFile),
    committedTransactions(stage.dbUrl),
  ]);
  return { cpu: cpuSnapshot(), requests, transactions };
}

async function stagesOf(stage: Stage, sentAt: Map<string, number>): Promise<Stages> {
  const rows = await withSql(stage.dbUrl, (sql) => sql<{ slug: string; created: number; activated: number; status: string }[]>`
    select slug, extract(epoch from created_at) * 1000 as created, extract(epoch from updated_at) * 1000 as activated, status
    from tenants where slug = any(${[...sentAt.keys()]})`);
  const stages: Stages = { pickup: [], provisioning: [], report: [] };
  for (const row of rows) {
    const readyAt = stage.watch.readyAt.get(row.slug);
    if (readyAt === undefined || row.status !== 'active') continue;
    stages.pickup.push(Number(row.created) - sentAt.get(row.slug)!);
    stages.provisioning.push(Number(row.activated) - Number(row.created));
    stages.report.push(readyAt - Number(row.activated));
  }
  return stages;
}

/** Histories of `count` Tenants spread evenly over the batch. */
async function sampleHistories(stage: Stage, slugs: string[], count: number): Promise<ProvisionHistory[]> {
  if (count === 0) return [];
  const picked = slugs.filter((_, i) => i % Math.max(1, Math.floor(slugs.length / count)) === 0).slice(0, count);
  const ids = await withSql(stage.dbUrl, (sql) => sql<{ id: string }[]>`select id::text as id from tenants where slug = any(${picked})`);
  return mapLimit(ids, 4, ({ id }) => provisionHistory(stage.temporal, id));
}

function latencies(sentAt: Map<string, number>, readyAt: Map<string, number>): Float64Array {
  return Float64Array.from([...sentAt].map(([name, sent]) => readyAt.get(name)! - sent));
}

/** One line per measurement as it completes, so that an interrupted run still shows what it measured. */
function logResult(r: Result): Result {
  log(`${r.workload}: ${r.tenants} Ready, last after ${r.allReadySeconds.toFixed(1)} s, ${r.rate.toFixed(2)} Tenants/s, p50 ${seconds(r.p50Ms)} s, p99 ${seconds(r.p99Ms)} s`);
  return r;
}

async function summarize(
  stage: Stage,
  workload: string,
  sentAt: Map<string, number>,
  window: { began: number; created: number; before: Counters; after: Counters },
  options: { rate?: number; rateTarget: boolean; latencyTarget: boolean; existing: number },
): Promise<Result> {
  const { began, created, before, after } = window;
  const ready = [...sentAt.keys()].map((name) => stage.watch.readyAt.get(name)!);
  const lastReady = Math.max(...ready);
  const values = latencies(sentAt, stage.watch.readyAt);
  const tenants = sentAt.size;
  return logResult({
    workload,
    tenants,
    createSeconds: (created - began) / 1000,
    firstReadySeconds: (Math.min(...ready) - began) / 1000,
    allReadySeconds: (lastReady - began) / 1000,
    rate: options.rate ?? tenants / ((lastReady - began) / 1000),
    p50Ms: quantile(values, 0.5),
    p99Ms: quantile(values, 0.99),
    cpu: cpuBetween(before.cpu, after.cpu, stage.groups),
    requests: requestsBetween(before.requests, after.requests),
    transactionsPerTenant: (after.transactions - before.transactions) / tenants,
    stages: await stagesOf(stage, sentAt),
    histories: await sampleHistories(stage, [...sentAt.keys()], Math.min(stage.settings.samples, tenants)),
    rateTarget: options.rateTarget,
    latencyTarget: options.latencyTarget,
    existing: options.existing,
  });
}

/** What the Tenants that missed a deadline look like: their object's status, their row, their workflow. */
async function describeMissing(stage: Stage, names: string[]): Promise<void> {
  const missing = names.filter((n) => !stage.watch.readyAt.has(n));
  const rows = await withSql(stage.dbUrl, (sql) => sql<{ slug: string; id: string; status: string; reason: string | null; storage: string[] }[]>`
    select t.slug, t.id::text as id, t.status, t.status_reason as reason,
      array(select s.backend || ':' || s.status || coalesce(' ' || s.error, '') from tenant_storage s where s.tenant_id = t.id order by s.backend) as storage
    from tenants t where t.slug = any(${missing})`);
  const byName = new Map(rows.map((r) => [r.slug, r]));
  for (const name of missing.slice(0, 10)) {
    const object = (await stage.kube.custom
      .getClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS, name })
      .catch((error: unknown) => ({ error: (error as Error).message }))) as TenantObject | { error: string };
    const status = 'error' in object ? object.error : JSON.stringify({ phase: object.status?.phase, finalizers: object.metadata.finalizers, conditions: object.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`) });
    const row = byName.get(name);
    const workflow = row ? await stage.temporal.workflow.getHandle(PROVISION_TENANT.workflowId(row.id)).describe().then((d) => d.status.name, (e: unknown) => (e as Error).message) : '-';
    log(`not Ready: ${name}: object ${status}; tenant ${row ? `${row.status}${row.reason ? ` (${row.reason})` : ''} storage ${row.storage.join(', ')}` : 'no row'}; workflow ${workflow}`);
  }
}

const timeoutMs = (settings: Settings, count: number) => (settings.timeoutSeconds ?? 120 + 1.2 * count) * 1000;

/** Applies `count` Tenants at once (creates `concurrency` at a time) and waits for all to be Ready. */
async function measureBatch(stage: Stage, workload: string, prefix: string, count: number, existing: number): Promise<Result> {
  const slugs = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  log(`${workload}: applying ${count} Tenant(s), ${Math.min(count, stage.settings.concurrency)} creates in flight`);
  const before = await readCounters(stage);
  const began = Date.now();
  const ready = stage.watch.untilReady(slugs, timeoutMs(stage.settings, count), workload);
  const sentAt = await createTenants(stage.kube, slugs, stage.settings.concurrency);
  const created = Date.now();
  log(`${workload}: ${count} created in ${((created - began) / 1000).toFixed(1)} s; waiting for Ready`);
  const progress = setInterval(() => {
    const done = slugs.filter((s) => stage.watch.readyAt.has(s)).length;
    log(`${workload}: ${done}/${count} Ready after ${((Date.now() - began) / 1000).toFixed(0)} s`);
  }, 15_000);
  try {
    await ready;
  } catch (error) {
    await describeMissing(stage, slugs).catch((failure: unknown) => log(`could not describe the missing Tenants: ${(failure as Error).message}`));
    throw error;
  } finally {
    clearInterval(progress);
  }
  const after = await readCounters(stage);
  return summarize(stage, workload, sentAt, { began, created, before, after }, { rateTarget: count >= 100, latencyTarget: false, existing });
}

/** Applies `count` Tenants one after another, each once the previous one is Ready. */
async function measureSingles(stage: Stage, prefix: string, count: number, existing: number): Promise<Result> {
  const workload = `single new Tenant among ${existing}`;
  log(`${workload}: ${count} in sequence`);
  const sentAt = new Map<string, number>();
  const before = await readCounters(stage);
  const began = Date.now();
  for (let i = 0; i < count; i++) {
    const slug = `${prefix}-${i}`;
    const ready = stage.watch.untilReady([slug], timeoutMs(stage.settings, 1), `${workload} #${i + 1}`);
    const sent = await createTenants(stage.kube, [slug], 1);
    sentAt.set(slug, sent.get(slug)!);
    await ready.catch(async (error: unknown) => {
      await describeMissing(stage, [slug]).catch(() => {});
      throw error;
    });
  }
  const finished = Date.now();
  const after = await readCounters(stage);
  return summarize(stage, workload, sentAt, { began, created: began, before, after }, {
    rate: count / ((finished - began) / 1000),
    rateTarget: false,
    latencyTarget: true,
    existing,
  });
}

function table(header: string[], rows: string[][], leftAligned = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < leftAligned ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const seconds = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : '-');
const median = (values: number[]) => quantile(Float64Array.from(values), 0.5);
const p99 = (values: number[]) => quantile(Float64Array.from(values), 0.99);

function report(results: Result[]): void {
  console.log(
    table(
      ['workload', 'tenants', 'created s', 'first Ready s', 'all Ready s', 'tenants/s', 'p50 s', 'p99 s', `cpu% ${CPU_GROUPS.join('/')}/other`],
      results.map((r) => [
        r.workload,
        String(r.tenants),
        r.latencyTarget ? '-' : r.createSeconds.toFixed(2),
        r.latencyTarget ? '-' : r.firstReadySeconds.toFixed(2),
        r.allReadySeconds.toFixed(2),
        r.rate.toFixed(r.rate < 100 ? 2 : 0),
        seconds(r.p50Ms),
        seconds(r.p99Ms),
        [...CPU_GROUPS.map((g) => r.cpu[g] ?? 0), r.cpu.other].join('/'),
      ]),
    ),
  );

  console.log('\nwhere apply->Ready goes, per Tenant (s, p50 / p99): pickup = create -> tenant row (operator queue, GET, finalizer, insert);');
  console.log('provisioning = row -> active (Temporal workflow); report = active -> Ready seen (requeue poll, queue, status patch)');
  console.log(
    table(
      ['workload', 'pickup', 'provisioning', 'report'],
      results.map((r) => [
        r.workload,
        ...[r.stages.pickup, r.stages.provisioning, r.stages.report].map((v) => `${seconds(median(v))} / ${seconds(p99(v))}`),
      ]),
    ),
  );

  const sampled = results.filter((r) => r.histories.length > 0);
  if (sampled.length) {
    console.log('\nthe provisioning workflows (median ms over sampled Tenants): worker queue = scheduled -> started; run = started -> completed');
    console.log(
      table(
        ['workload', 'samples', 'workflow', 'wf-task queue', 'wf-task run', 'activity queue', 'activity run', 'child start', 'rest', 'retries'],
        sampled.map((r) => {
          const h = r.histories;
          const run = (x: ProvisionHistory) => [...x.activityRunMs.values()].reduce((a, b) => a + b, 0);
          const rest = (x: ProvisionHistory) => x.totalMs - x.workflowTaskQueueMs - x.workflowTaskRunMs - x.activityQueueMs - run(x) - x.childStartMs;
          return [
            r.workload,
            String(h.length),
            ...[(x: ProvisionHistory) => x.totalMs, (x: ProvisionHistory) => x.workflowTaskQueueMs, (x: ProvisionHistory) => x.workflowTaskRunMs,
              (x: ProvisionHistory) => x.activityQueueMs, run, (x: ProvisionHistory) => x.childStartMs, rest].map((f) => median(h.map(f)).toFixed(0)),
            String(h.reduce((a, x) => a + x.retries, 0)),
          ];
        }),
      ),
    );
    for (const r of sampled) {
      const names = [...new Set(r.histories.flatMap((h) => [...h.activityRunMs.keys()]))];
      const perActivity = names
        .map((name) => ({ name, ms: median(r.histories.map((h) => h.activityRunMs.get(name) ?? 0)) }))
        .sort((a, b) => b.ms - a.ms)
        .map((a) => `${a.name} ${a.ms.toFixed(0)}`);
      const local = median(r.histories.map((h) => h.localActivities));
      const queued = perActivity.length ? `; queued activities, run ms: ${perActivity.join(', ')}` : '';
      console.log(`  ${r.workload}: ${local} local activities (their time is in wf-task run)${queued}`);
    }
  }

  console.log('\nAPI server requests per Tenant (all clients; the benchmark sends 1 POST tenants each and one WATCH), mean ms; PostgreSQL commits per Tenant');
  for (const r of results) {
    const top = r.requests.slice(0, 9).map((q) => `${q.key} ${(q.count / r.tenants).toFixed(1)} (${((q.seconds / q.count) * 1000).toFixed(1)} ms)`);
    console.log(`  ${r.workload}: ${top.join(', ')}; pg commits ${r.transactionsPerTenant.toFixed(1)}`);
  }

  const verdicts: string[][] = [];
  for (const r of results) {
    if (r.rateTarget) verdicts.push([`tenants/s, ${r.tenants} applied at once`, r.rate.toFixed(2), `>= ${TARGET_RATE}`, r.rate >= TARGET_RATE ? 'PASS' : 'MISS']);
    if (r.latencyTarget) {
      verdicts.push([`p99 apply->Ready, ${r.workload} (n=${r.tenants})`, `${seconds(r.p99Ms)} s`, `< ${TARGET_P99_MS / 1000} s`, r.p99Ms < TARGET_P99_MS ? 'PASS' : 'MISS']);
    }
  }
  if (verdicts.length) console.log(`\n${table(['target', 'value', 'target', 'verdict'], verdicts)}`);
}

/** Starts `scripts/start.ts` with a role; its output is kept and shown on failure (or with BENCH_VERBOSE). */
function startRole(role: 'worker' | 'operator', env: NodeJS.ProcessEnv, profileDir: string | undefined): Running {
  // Node refuses --cpu-prof in NODE_OPTIONS: the flags go on node's own command line, tsx as a loader.
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, role)}`] : [];
  if (profileDir) mkdirSync(join(profileDir, role), { recursive: true });
  return start(process.execPath, [...profile, '--max-semi-space-size=64', '--import', 'tsx', 'scripts/start.ts', '--role', role], { env: { ...env, HEALTH_PORT: '0' } });
}

/** Waits for `ready`, failing early (with its output) when the process ends first. */
async function untilStarted(what: string, child: Running, ready: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  let exited: string | undefined;
  void child.finished.then(({ code, output }) => (exited = `exited with ${code}:\n${tail(output, 40)}`));
  const deadline = Date.now() + timeoutMs;
  while (!(await ready().catch(() => false))) {
    if (exited) throw new Error(`${what} ${exited}`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/** Stops a role's process; with `failed`, shows the lines of its output that report failures. */
async function stopRole(what: string, child: Running, failed: boolean): Promise<void> {
  try {
    process.kill(child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const ended = await Promise.race([child.finished, sleep(60_000).then(() => undefined)]);
  if (!ended) return void log(`${what} (pid ${child.pid}) did not stop within 60 s`);
  if (process.env.BENCH_VERBOSE) log(`${what} output:\n${ended.output}`);
  else if (failed) log(`${what}, lines that report failures:\n${tail(ended.output.split('\n').filter((l) => /fail|error|warn/i.test(l)).join('\n'), 40)}`);
}

async function main(): Promise<void> {
  const settings = readSettings();
  const runId = randomBytes(3).toString('hex');
  const load = loadavg();
  const cluster = await benchCluster(log);
  const { url: dbUrl, tenantUrl: tenantDbUrl } = await benchDatabase(cluster, DATABASE);
  const pg = await withSql(dbUrl, async (sql) => {
    const [row] = await sql<{ version: string; pid: number }[]>`select current_setting('server_version') as version, pg_backend_pid() as pid`;
    return { version: row!.version, postmaster: localPostmasterOf(row!.pid) };
  });
  const postmaster = pg.postmaster;

  const temporalServer = await ensureTemporalDevServer({ ...BENCH_TEMPORAL, log });
  await ensureSearchAttributes({ cli: temporalServer.cli, address: temporalServer.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });
  const kubeLog = (message: string) => log(`[${BENCH_KUBE.name}] ${message}`);
  const apiServer = await ensureKubeApiServer({ ...BENCH_KUBE, binaries: await ensureKubeBinaries({ log: kubeLog }), log: kubeLog });
  const kubectl = (args: string[]) => runKubectl(apiServer.kubectl, apiServer.kubeconfigPath, args);
  await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=svc-bench', '-f', CRDS_DIR]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/tenants.platform.svc.dev']);
  const kubeConfig = loadKubeConfig(apiServer.kubeconfigPath);
  const kube = kubeFromConfig(kubeConfig);
  await untilTenantsServed(kube);
  const clearStarted = Date.now();
  const leftovers = await clearTenants(kube);
  if (leftovers.tenants || leftovers.namespaces) {
    log(`removed ${leftovers.tenants} Tenants and ${leftovers.namespaces} Namespaces of earlier runs in ${((Date.now() - clearStarted) / 1000).toFixed(1)} s`);
  }

  const blobDir = mkdtempSync(join(tmpdir(), 'svc-bench-blobs-'));
  const identity = `bench-operator-${runId}`;
  const leaseName = `svc-platform-operator-bench-${runId}`;
  const taskQueue = `bench-operator-${runId}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: dbUrl,
    ...(tenantDbUrl ? { TENANT_DATABASE_URL: tenantDbUrl } : {}),
    TEMPORAL_ADDRESS: temporalServer.address,
    TEMPORAL_NAMESPACE: temporalServer.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SVC_DEV_SEED: 'false',
    HEALTH_PORT: '0',
    SVC_BLOB_DIR: blobDir,
    PUBLIC_URL: 'http://127.0.0.1:8080',
    KUBECONFIG: apiServer.kubeconfigPath,
    OPERATOR_NAMESPACE: LEASE_NAMESPACE,
    OPERATOR_LEASE_NAME: leaseName,
    POD_NAME: identity,
  };
  const connection = await Connection.connect({ address: temporalServer.address });
  const temporal = new Client({ connection, namespace: temporalServer.namespace });

  log(`starting the worker (task queue ${taskQueue})`);
  const worker = startRole('worker', env, settings.profileDir);
  let operator: Running | undefined;
  let watch: ReadinessWatch | undefined;
  const results: Result[] = [];
  let failed = false;
  try {
    await untilStarted('the worker', worker, async () => {
      const queue = await connection.workflowService.describeTaskQueue({ namespace: temporalServer.namespace, taskQueue: { name: taskQueue } });
      return (queue.pollers?.length ?? 0) > 0;
    });
    log('starting the operator');
    operator = startRole('operator', env, settings.profileDir);
    await untilStarted('the operator', operator, async () => {
      const lease = await kube.coordination.readNamespacedLease({ name: leaseName, namespace: LEASE_NAMESPACE });
      return lease.spec?.holderIdentity === identity;
    });
    log(`the operator leads (${identity})`);
    watch = await watchReadiness(kubeConfig, kube, log);
    const groups: ProcessGroups = {
      operator: [operator.pid],
      worker: [worker.pid],
      postgres: postmaster ? [postmaster] : [],
      temporal: [temporalServer.pid],
      apiserver: [apiServer.pids.apiServer],
      etcd: [apiServer.pids.etcd],
      bench: [process.pid],
    };
    const stage: Stage = { dbUrl, kube, apiServer, temporal, watch, groups, settings };

    results.push(await measureBatch(stage, 'first Tenant after start', `t${runId}-w`, 1, 0));
    let existing = 1;
    for (const [index, size] of settings.sizes.entries()) {
      await sleep(2_000);
      results.push(await measureBatch(stage, `${size} applied at once`, `t${runId}-b${index + 1}`, size, existing));
      existing += size;
    }
    if (settings.singles > 0) {
      await sleep(2_000);
      results.push(await measureSingles(stage, `t${runId}-s`, settings.singles, existing));
    }
  } catch (error) {
    failed = true;
    if (results.length) {
      console.log('\nmeasured before the failure:');
      report(results);
    }
    throw error;
  } finally {
    watch?.stop();
    if (operator) await stopRole('operator', operator, failed);
    await stopRole('worker', worker, failed);
    await connection.close();
    await kube.coordination.deleteNamespacedLease({ name: leaseName, namespace: LEASE_NAMESPACE }).catch((error: unknown) => {
      if (statusOf(error) !== 404) log(`could not delete lease ${leaseName}: ${(error as Error).message}`);
    });
    if (!settings.keep) {
      const removed = await clearTenants(kube).catch((error: unknown) => void log(`cleanup: ${(error as Error).message}`));
      if (removed) log(`removed ${removed.tenants} Tenants and ${removed.namespaces} Namespaces`);
      await dropDatabase(cluster.adminUrl, DATABASE);
    }
    rmSync(blobDir, { recursive: true, force: true });
  }

  const endLoad = loadavg();
  console.log(
    `\nmachine: nproc ${availableParallelism()}, node ${process.version}, PostgreSQL ${pg.version}, kube-apiserver ${KUBERNETES_VERSION} (etcd, no nodes), ` +
      `Temporal dev server ${temporalServer.address} (SQLite); worker and operator are separate processes (operator concurrency 16); ` +
      `${settings.concurrency} creates in flight. Load average before ${load.map((l) => l.toFixed(2)).join(' ')}, after ${endLoad.map((l) => l.toFixed(2)).join(' ')}. ` +
      'CPU % is of one core (machine total up to 100 x nproc).',
  );
  report(results);
}

// Runs share the private servers and the database name: one at a time, or each would clear the other's Tenants.
await withLock(join(stateDir(BENCH_KUBE.name), 'operator-bench.lock'), main, { timeoutMs: 3 * 3_600_000, log });
