/**
 * `npm run soak -- --minutes N`: the platform under a steady mixed load for N minutes (10 by default).
 *
 * The roles run apart, as the chart runs them: the edge and the control plane on Bun (the edge
 * reaches the control plane over tRPC's HTTP link) and the worker on Node, on a private PostgreSQL
 * cluster and Temporal dev server. The chat model and the embedding model are OpenAI-compatible
 * endpoints in this process (test/harness/openai-*-endpoint.ts: their documented wire formats).
 *
 * 1. Capacity: `--capacity-seconds` (10) of the mix from `--concurrency` (32) closed-loop clients,
 *    over that time plus the time to finish the work they started (document processing, executions).
 * 2. The soak: the same mix at `--load` (0.7) of that rate, sent on schedule whatever the answers
 *    take (open loop), with `--followers` (8) realtime streams open throughout. Every
 *    `--report-seconds` (20) it prints the error rate, p50 and p99 latency and each role's
 *    resident memory (VmRSS of its process).
 * 3. A summary against the target (docs/decisions/0163-soak-target.md): no error, each role's
 *    resident memory in the last minute within 10% of the second minute's, and the executions and
 *    document jobs accepted done within a minute of the load's end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { dropDatabase } from '../../scripts/stack/postgres.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { clientFlags, ensureSearchAttributes, ensureTemporalDevServer, PLATFORM_SEARCH_ATTRIBUTES, runTemporalCli } from '../../scripts/stack/temporal.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { startEmbeddingsEndpoint } from '../harness/openai-embeddings-endpoint.ts';
import { benchCluster, benchDatabase, loadProjects, withSql } from './bench-db.ts';
import { start, tail, type Running } from './child.ts';
import { quantile } from './latency.ts';
import { residentBytes } from './process-cpu.ts';
import { table } from './report.ts';
import { runBenchmark } from './settings.ts';
import { MIX, mixOrder, runOperation, startFollower, type OperationKind, type Target } from './soak-load.ts';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    'capacity-seconds': { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
    load: { type: 'string', default: '0.7' },
    followers: { type: 'string', default: '8' },
    'report-seconds': { type: 'string', default: '20' },
  },
  allowPositionals: false,
});

function positive(name: string, max = Number.POSITIVE_INFINITY): number {
  const value = Number(args[name as keyof typeof args]);
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    console.error(`--${name} must be a positive number${Number.isFinite(max) ? ` of at most ${max}` : ''}, not "${args[name as keyof typeof args]}"`);
    process.exit(2);
  }
  return value;
}

const MINUTES = positive('minutes');
const CAPACITY_SECONDS = positive('capacity-seconds');
const CONCURRENCY = Math.round(positive('concurrency'));
const LOAD = positive('load', 1);
const FOLLOWERS = Math.round(Number(args.followers));
const REPORT_SECONDS = positive('report-seconds');
if (MINUTES < 3) {
  console.error('--minutes must be at least 3: the target compares the second minute with the last');
  process.exit(2);
}

const DATABASE = 'svc_bench_soak';
const USER = 'admin@acme.test';
const ROLES = ['edge', 'control-plane', 'worker'] as const;
type Role = (typeof ROLES)[number];
/** How often resident memory is read. */
const MEMORY_SAMPLE_MS = 2_000;
/** Sign in again this often: the built-in provider's tokens live an hour. */
const TOKEN_REFRESH_MS = 20 * 60_000;
/** How long the work accepted during the load (executions, document jobs) may take to finish once it stops. */
const DRAIN_SECONDS = 60;
/** How long the capacity measurement waits for the work its clients started. */
const CAPACITY_DRAIN_SECONDS = 120;
const log = (message: string) => process.stderr.write(`${message}\n`);
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '-');

async function waitForHealth(url: string, roles: Record<Role, Running>): Promise<void> {
  const exited = Object.entries(roles).map(([role, r]) => r.finished.then(({ code, output }) => Promise.reject(new Error(`the ${role} exited (${code}) while starting:\n${tail(output)}`))));
  const healthy = (async () => {
    for (let i = 0; i < 1200; i++) {
      if (await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)) return;
      await sleep(100);
    }
    throw new Error(`the platform did not become ready at ${url}`);
  })();
  await Promise.race([healthy, ...exited]);
}

/** Executions still running and document jobs still open, in every tenant. */
async function openWork(url: string): Promise<{ executions: number; documentJobs: number }> {
  return withSql(url, async (sql) => {
    const [row] = await sql<[{ executions: number; documentJobs: number }]>`
      select (select count(*)::int from executions where state = 'running') as "executions",
             (select count(*)::int from document_jobs where state in ('queued', 'running')) as "documentJobs"`;
    return row;
  });
}

/** Waits until no execution runs and no document job is open, up to `seconds`; the seconds it took, or undefined. */
async function untilDone(url: string, seconds: number): Promise<number | undefined> {
  const began = performance.now();
  for (;;) {
    const open = await openWork(url);
    if (open.executions + open.documentJobs === 0) return (performance.now() - began) / 1000;
    if (performance.now() - began > seconds * 1000) return undefined;
    await sleep(500);
  }
}

/** Latencies and errors of one span of time, per kind of operation. */
class Tally {
  readonly latencies = new Map<OperationKind, number[]>();
  readonly errors = new Map<OperationKind, number>();
  record(kind: OperationKind, latencyMs: number, failed: boolean) {
    if (failed) this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    else {
      const list = this.latencies.get(kind) ?? [];
      list.push(latencyMs);
      this.latencies.set(kind, list);
    }
  }
  get count() {
    return [...this.latencies.values()].reduce((n, l) => n + l.length, 0) + this.errorCount;
  }
  get errorCount() {
    return [...this.errors.values()].reduce((n, e) => n + e, 0);
  }
  quantiles(kind?: OperationKind) {
    const values = kind ? (this.latencies.get(kind) ?? []) : [...this.latencies.values()].flat();
    const sorted = Float64Array.from(values);
    return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
  }
}

async function main(): Promise<void> {
  const cluster = await benchCluster(log);
  const { url, tenantUrl } = await benchDatabase(cluster, DATABASE);
  const temporal = await ensureTemporalDevServer({ name: 'temporal-bench', port: 27259, log });
  await ensureSearchAttributes({ cli: temporal.cli, address: temporal.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });
  const model = await startScriptedEndpoint();
  const embeddings = await startEmbeddingsEndpoint();
  const [edgePort, controlPlanePort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${edgePort}`;
  const controlPlaneToken = randomBytes(32).toString('base64url');
  // A queue of this run's own: runs an earlier soak left unfinished on the dev server never reach its worker.
  const taskQueue = `bench-soak-${randomBytes(4).toString('hex')}`;
  const blobDir = mkdtempSync(join(tmpdir(), 'svc-soak-blobs-'));
  const common = {
    ...process.env,
    NODE_ENV: 'development',
    DATABASE_URL: url,
    ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}),
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    HOST: '127.0.0.1',
    PUBLIC_URL: origin,
    SVC_BLOB_DIR: blobDir,
    AI_BASE_URL: model.settings.baseUrl,
    AI_API_KEY: model.settings.apiKey,
    AI_MODEL: model.settings.model,
    EMBEDDINGS_BASE_URL: embeddings.baseUrl,
    EMBEDDINGS_MODEL: 'soak-embeddings',
    RATE_LIMIT_RESOURCES_PER_MINUTE: '1000000000',
    RATE_LIMIT_API_PER_MINUTE: '1000000000',
    RATE_LIMIT_UPLOADS_PER_MINUTE: '1000000000',
    KUBECONFIG: '/nonexistent',
  };
  log(`starting the roles apart: control plane and edge on Bun, the worker on Node; the edge on ${origin}`);
  const roles: Record<Role, Running> = {
    'control-plane': start(bunExecutable(), ['main.ts', '--role', 'control-plane'], {
      env: { ...common, PORT: String(controlPlanePort), CONTROL_PLANE_TOKEN: controlPlaneToken },
    }),
    worker: start('node', ['--max-semi-space-size=64', '--import', 'tsx', 'main.ts', '--role', 'worker'], { env: { ...common, HEALTH_PORT: '0' } }),
    edge: start(bunExecutable(), ['main.ts', '--role', 'edge'], {
      env: { ...common, PORT: String(edgePort), CONTROL_PLANE_URL: `http://127.0.0.1:${controlPlanePort}`, CONTROL_PLANE_TOKEN: controlPlaneToken },
    }),
  };
  const followers: Array<ReturnType<typeof startFollower>> = [];
  try {
    await waitForHealth(origin, roles);
    const tenantId = await withSql(url, async (sql) => {
      const [acme] = await sql<[{ id: string }]>`update tenants set plan = 'enterprise' where slug = 'acme' returning id::text as id`;
      return acme.id;
    });
    await loadProjects(url, 'acme', 10_000);
    const projects = await withSql(url, async (sql) =>
      (await sql<{ id: string }[]>`select id::text as id from resources where type = 'project' and tenant_id = ${tenantId}::uuid order by random() limit 2000`).map((r) => r.id),
    );
    let token = (await loginWithPkce({ issuer: origin, email: USER })).accessToken;
    const refresh = setInterval(() => {
      loginWithPkce({ issuer: origin, email: USER }).then((t) => (token = t.accessToken), (error: unknown) => log(`sign-in failed: ${(error as Error).message}`));
    }, TOKEN_REFRESH_MS);
    refresh.unref();
    const target: Target = { origin, tenantId, token: () => token, projects, executionsStillRunning: 0 };
    const pick = mixOrder();
    const errorSamples = new Map<string, number>();
    let sequence = 0;
    type Recorder = (kind: OperationKind, latencyMs: number, failed: boolean) => void;
    const timed = async (record: Recorder) => {
      const kind = pick(sequence++);
      const began = performance.now();
      try {
        await runOperation(target, kind);
        record(kind, performance.now() - began, false);
      } catch (error) {
        record(kind, performance.now() - began, true);
        const message = `${kind}: ${(error as Error).message}`.slice(0, 300);
        errorSamples.set(message, (errorSamples.get(message) ?? 0) + 1);
      }
    };

    log(`warming up: ${Math.min(5, CAPACITY_SECONDS)} s of the mix from ${CONCURRENCY} clients`);
    const closedLoop = async (seconds: number, tally: Tally) => {
      const end = performance.now() + seconds * 1000;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) await timed((kind, latency, failed) => tally.record(kind, latency, failed));
      }));
    };
    await closedLoop(Math.min(5, CAPACITY_SECONDS), new Tally());
    await untilDone(url, CAPACITY_DRAIN_SECONDS);
    log(`measuring capacity: ${CAPACITY_SECONDS} s of the mix from ${CONCURRENCY} closed-loop clients, until the work they started is done`);
    const capacityTally = new Tally();
    const capacityStart = performance.now();
    await closedLoop(CAPACITY_SECONDS, capacityTally);
    // Uploads' processing and executions answered 202 go on after their answers: capacity counts
    // the time to finish them, else it would be a rate the worker cannot keep up with.
    const capacityDrain = await untilDone(url, CAPACITY_DRAIN_SECONDS);
    const capacity = capacityTally.count / ((performance.now() - capacityStart) / 1000);
    const capacityErrors = capacityTally.errorCount;
    const rate = capacity * LOAD;
    log(
      `capacity ${capacity.toFixed(1)} operations/s (${capacityErrors} errors; the work they started done ${capacityDrain === undefined ? `not within ${CAPACITY_DRAIN_SECONDS} s` : `${capacityDrain.toFixed(1)} s after`}); the soak runs ${rate.toFixed(1)}/s for ${MINUTES} min`,
    );
    errorSamples.clear();
    target.executionsStillRunning = 0;
    await sleep(3_000);

    for (let i = 0; i < FOLLOWERS; i++) followers.push(startFollower(target));
    const memory = new Map<Role, number[][]>(ROLES.map((r) => [r, []]));
    const soakStart = performance.now();
    const minuteOf = () => Math.floor((performance.now() - soakStart) / 60_000);
    const sampleMemory = () => {
      const minute = minuteOf();
      for (const role of ROLES) {
        const minutes = memory.get(role)!;
        (minutes[minute] ??= []).push(residentBytes(roles[role].pid));
      }
    };
    const whole = new Tally();
    let window = new Tally();
    let windowStart = performance.now();
    const record: Recorder = (kind, latency, failed) => {
      whole.record(kind, latency, failed);
      window.record(kind, latency, failed);
    };

    console.log(`\nsoak: ${MINUTES} min at ${rate.toFixed(1)} operations/s (${Math.round(LOAD * 100)}% of ${capacity.toFixed(1)}/s), ${FOLLOWERS} realtime followers`);
    const inFlight = new Set<Promise<void>>();
    console.log(' time   ops/s   errors  p50 ms  p99 ms  in flight  RSS MiB edge / control plane / worker  follower events');
    const printWindow = () => {
      const now = performance.now();
      const elapsed = (now - soakStart) / 1000;
      const seconds = (now - windowStart) / 1000;
      const q = window.quantiles();
      const rss = ROLES.map((r) => mib(residentBytes(roles[r].pid))).join(' / ');
      const clock = `${Math.floor(elapsed / 60)}:${String(Math.floor(elapsed % 60)).padStart(2, '0')}`;
      const events = followers.reduce((n, f) => n + f.events, 0);
      console.log(
        `${clock.padStart(5)}  ${(window.count / seconds).toFixed(1).padStart(6)}  ${String(window.errorCount).padStart(7)}  ${ms(q.p50).padStart(6)}  ${ms(q.p99).padStart(6)}  ${String(inFlight.size).padStart(9)}  ${rss.padStart(38)}  ${String(events).padStart(15)}`,
      );
      window = new Tally();
      windowStart = now;
    };

    const memoryTimer = setInterval(sampleMemory, MEMORY_SAMPLE_MS);
    const reportTimer = setInterval(printWindow, REPORT_SECONDS * 1000);
    sampleMemory();
    let sent = 0;
    let maxInFlight = 0;
    const soakEnd = soakStart + MINUTES * 60_000;
    while (performance.now() < soakEnd) {
      const due = Math.floor(((performance.now() - soakStart) / 1000) * rate);
      while (sent < due) {
        sent++;
        const operation = timed(record).finally(() => inFlight.delete(operation));
        inFlight.add(operation);
      }
      maxInFlight = Math.max(maxInFlight, inFlight.size);
      await sleep(5);
    }
    await Promise.all(inFlight);
    clearInterval(memoryTimer);
    clearInterval(reportTimer);
    if (performance.now() - windowStart > 1_000) printWindow();
    const soakSeconds = (performance.now() - soakStart) / 1000;
    await Promise.all(followers.map((f) => f.stop()));
    const backlogAtEnd = await openWork(url);
    const drainedIn = await untilDone(url, DRAIN_SECONDS);
    const backlog = await openWork(url);
    const followerFailures = followers.flatMap((f) => f.failures);
    for (const failure of followerFailures) errorSamples.set(`follower: ${failure}`, (errorSamples.get(`follower: ${failure}`) ?? 0) + 1);

    // The summary.
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`\nsoak summary (machine: nproc ${availableParallelism()}, load average at the end ${load}; node ${process.version}; roles apart, edge and control plane on Bun)`);
    console.log(`capacity: ${capacity.toFixed(1)} operations/s from ${CONCURRENCY} closed-loop clients over ${CAPACITY_SECONDS} s (${capacityErrors} errors)`);
    console.log(
      `soak: ${whole.count} operations in ${(soakSeconds / 60).toFixed(1)} min, ${(whole.count / (MINUTES * 60)).toFixed(1)}/s (target ${rate.toFixed(1)}/s), at most ${maxInFlight} in flight; ${FOLLOWERS} followers received ${followers.reduce((n, f) => n + f.events, 0)} change events`,
    );
    console.log(
      table(
        ['operation', 'share %', 'count', 'errors', 'p50 ms', 'p99 ms'],
        [...(Object.keys(MIX) as OperationKind[]).map((kind) => {
          const q = whole.quantiles(kind);
          return [kind, String(MIX[kind]), String((whole.latencies.get(kind)?.length ?? 0) + (whole.errors.get(kind) ?? 0)), String(whole.errors.get(kind) ?? 0), ms(q.p50), ms(q.p99)];
        }), ['all', '100', String(whole.count), String(whole.errorCount), ms(whole.quantiles().p50), ms(whole.quantiles().p99)]],
      ),
    );
    const mean = (values: number[] | undefined) => (values?.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);
    // The last minute of the schedule (answers still arriving after it are not the steady state).
    const lastMinute = Math.ceil(MINUTES) - 1;
    const memoryRows = ROLES.map((role) => {
      const minutes = memory.get(role)!;
      const second = mean(minutes[1]);
      const last = mean(minutes[lastMinute]);
      const change = (last - second) / second;
      return { role, second, last, change, flat: Math.abs(change) <= 0.1 };
    });
    console.log();
    console.log(
      table(
        ['role', 'RSS MiB minute 2', `minute ${lastMinute + 1} (last)`, 'change', 'within 10%'],
        memoryRows.map((r) => [r.role, mib(r.second), mib(r.last), `${(r.change * 100).toFixed(1)}%`, r.flat ? 'PASS' : 'FAIL']),
      ),
    );
    console.log(
      `\nwork accepted and not done when the load stopped: ${backlogAtEnd.executions} executions running, ${backlogAtEnd.documentJobs} document jobs open; synchronous executions answered 202 (still running after the 10 s wait): ${target.executionsStillRunning}`,
    );
    console.log(
      drainedIn === undefined
        ? `not done ${DRAIN_SECONDS} s later: ${backlog.executions} executions, ${backlog.documentJobs} document jobs (target: done within ${DRAIN_SECONDS} s: FAIL)`
        : `all done ${drainedIn.toFixed(1)} s later (target: within ${DRAIN_SECONDS} s: PASS)`,
    );
    const errors = whole.errorCount + followerFailures.length;
    console.log(`\nerrors: ${whole.errorCount} operations, ${followerFailures.length} follower streams (target 0: ${errors === 0 ? 'PASS' : 'FAIL'})`);
    const byCount = [...errorSamples].sort((a, b) => b[1] - a[1]);
    for (const [message, count] of byCount.slice(0, 20)) console.log(`  ${count} x ${message}`);
    if (byCount.length > 20) console.log(`  and ${byCount.slice(20).reduce((n, [, count]) => n + count, 0)} more of ${byCount.length - 20} other kinds`);
    const passed = errors === 0 && memoryRows.every((r) => r.flat) && drainedIn !== undefined;
    console.log(`soak target (0 errors, memory flat per role, accepted work done): ${passed ? 'PASS' : 'FAIL'}`);
  } finally {
    await Promise.all(followers.map((f) => f.stop()));
    for (const role of ['edge', 'control-plane', 'worker'] as const) {
      try {
        process.kill(roles[role].pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const { code, output } = await roles[role].finished;
      if (code !== 0 || process.env.BENCH_VERBOSE) log(`the ${role} ended with ${code}:\n${tail(output, 40)}`);
    }
    // The dev server outlives the run: what this run left running there is ended.
    await runTemporalCli(temporal.cli, [
      'workflow', 'terminate', ...clientFlags(temporal.address, temporal.namespace),
      '--query', `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`, '--reason', 'the soak ended', '--yes',
    ]).catch((error: unknown) => log(`could not end this run's workflows: ${(error as Error).message}`));
    await model.close();
    await embeddings.close();
    await dropDatabase(cluster.adminUrl, DATABASE).catch(() => undefined);
    rmSync(blobDir, { recursive: true, force: true });
  }
}

await runBenchmark(main);
