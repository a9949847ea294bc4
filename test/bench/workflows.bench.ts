/**
 * `npm run bench:workflows`: the rate and latency of execute-and-complete for a two-step execution
 * (`project-briefing`: a resources query, then the AI model) through the REST API, against a bare
 * Temporal SDK client running the same workflow type on the same worker and server, in one run.
 * Target: REST rate >= 0.9 x bare rate. Settings: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONCURRENCY.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import type { ExecutionPlan, StepDefinition } from '../../control-plane/orchestrate/orchestrate.schema.ts';
import { RUN_EXECUTION, TENANT_ID, WORKFLOW_KEY } from '../../control-plane/temporal/workflow-contract.ts';
import { dropDatabase } from '../../scripts/stack/postgres.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { ensureSearchAttributes, ensureTemporalDevServer, PLATFORM_SEARCH_ATTRIBUTES } from '../../scripts/stack/temporal.ts';
import { benchCluster, benchDatabase, withSql } from './bench-db.ts';
import { start } from './child.ts';
import { quantile, type Measurement } from './latency.ts';
import { ratiosTable, resultsTable, type Row } from './report.ts';
import { ensureWrk, runWrk } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const DATABASE = 'svc_bench_workflows';
const TASK_QUEUE = 'bench-workflows';
const WORKFLOW = 'project-briefing';
const INPUT = { status: 'active', question: 'Which project has the largest budget?' };
const USER = 'admin@acme.test';
const log = (message: string) => process.stderr.write(`${message}\n`);

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`platform did not become healthy at ${url}`);
}

/** Closed-loop clients of the bare SDK: each runs one execution to completion, then the next. */
async function runBare(client: Client, plans: ExecutionPlan[], seconds: number): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end && next < plans.length) {
      const plan = plans[next++]!;
      const started = performance.now();
      try {
        await client.workflow.execute(RUN_EXECUTION.type, {
          taskQueue: TASK_QUEUE,
          workflowId: RUN_EXECUTION.workflowId(plan.executionId),
          args: [plan],
          typedSearchAttributes: [
            { key: TENANT_ID, value: plan.tenantId },
            { key: WORKFLOW_KEY, value: WORKFLOW },
          ],
        });
        latencies.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const elapsed = (performance.now() - began) / 1000;
  const sorted = Float64Array.from(latencies);
  return { rate: latencies.length / elapsed, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), errors };
}

/** Execution rows the bare runs need (the REST path creates its own), made before timing starts. */
async function prepareBarePlans(url: string, tenantId: string, userId: string, count: number): Promise<ExecutionPlan[]> {
  return withSql(url, async (sql) => {
    const [definition] = await sql<{ steps: StepDefinition[] }[]>`
      select steps from workflow_definitions where tenant_id = ${tenantId}::uuid and id = ${WORKFLOW}`;
    const steps = definition!.steps.map((s) => ({ stepId: s.id, name: s.name, state: 'pending', duration: 0 }));
    const rows = await sql<{ id: string }[]>`
      insert into executions (tenant_id, workflow_id, workflow_version, state, input, steps, created_by)
      select ${tenantId}::uuid, ${WORKFLOW}, '1', 'running', ${sql.json(INPUT)}, ${sql.json(steps)}, ${userId}::uuid
      from generate_series(1, ${count})
      returning id::text as id`;
    return rows.map((r) => ({ tenantId, executionId: r.id, input: INPUT, steps: definition!.steps }));
  });
}

async function main(): Promise<void> {
  const cluster = await benchCluster(log);
  const { url, tenantUrl } = await benchDatabase(cluster, DATABASE);
  const temporal = await ensureTemporalDevServer({ name: 'temporal-bench', port: 27259, log });
  await ensureSearchAttributes({ cli: temporal.cli, address: temporal.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });

  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  log(`starting the platform as npm start runs it (edge and control plane on Bun, the worker a Node process beside it) on ${origin}`);
  const platform = start(bunExecutable(), ['scripts/start.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: origin,
      RATE_LIMIT_RESOURCES_PER_MINUTE: '1000000000',
      RATE_LIMIT_API_PER_MINUTE: '1000000000',
    },
  });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  log("temporal client connected");
  try {
    await waitForHealth(origin);
    log("platform healthy");
    const token = (
      await Promise.race([
        loginWithPkce({ issuer: origin, email: USER }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('sign-in timed out')), 20_000)),
      ])
    ).accessToken;
    log("signed in");
    const me = (await (await fetch(`${origin}/api/svc/v3/users/me`, { headers: { authorization: `Bearer ${token}` } })).json()) as { id: string; tenantId: string };
    for (let i = 0; i < 20; i++) {
      await fetch(`${origin}/api/svc/v3/resources/project`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bench project ${i}`, status: i % 2 ? 'active' : 'completed', budget: 1000 + i * 250 }),
      });
    }

    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
    const pathsFile = join(dir, 'paths.txt');
    const bodyFile = join(dir, 'body.json');
    writeFileSync(pathsFile, `/api/svc/v3/orchestrate/workflows/${WORKFLOW}/execute\n`);
    writeFileSync(bodyFile, JSON.stringify({ input: INPUT }));
    const wrk = await ensureWrk(log);
    const wrkOptions = { url: origin, token, pathsFile, bodyFile, method: 'POST', connections: CONCURRENCY, threads: 2, platform: platform.pid };

    log(`warm-up ${WARMUP_SECONDS}s, then REST for ${SECONDS}s with ${CONCURRENCY} connections`);
    await runWrk(wrk, { ...wrkOptions, seconds: WARMUP_SECONDS });
    const rest = await runWrk(wrk, { ...wrkOptions, seconds: SECONDS });

    const plans = await prepareBarePlans(url, me.tenantId, me.id, Math.ceil(Math.max(rest.rate, 10) * 3 * (SECONDS + WARMUP_SECONDS)) + 100);
    log(`warm-up ${WARMUP_SECONDS}s, then the bare SDK client for ${SECONDS}s with ${CONCURRENCY} concurrent executions`);
    await runBare(client, plans.splice(0, Math.ceil(plans.length / 4)), WARMUP_SECONDS);
    const bare = await runBare(client, plans, SECONDS);

    const unfinished = await withSql(url, (sql) => sql<{ state: string; n: number }[]>`
      select state, count(*)::int as n from executions where state <> 'completed' and workflow_id = ${WORKFLOW}
        and started_at < now() - interval '30 seconds' group by state`);
    const rows: Row[] = [
      { workload: 'execute 2-step (REST, sync)', tool: 'wrk', connections: CONCURRENCY, result: rest },
      { workload: 'execute 2-step (bare SDK)', tool: 'temporal client', connections: CONCURRENCY, result: bare },
    ];
    console.log(`\nmachine: nproc ${(await import('node:os')).availableParallelism()}, edge and control plane on Bun, the worker on node ${process.version}; Temporal dev server ${temporal.address}`);
    console.log(resultsTable(rows));
    console.log();
    console.log(ratiosTable([{ label: 'REST / bare SDK', numerator: rows[0]!, denominator: rows[1]!, target: 0.9 }]));
    if (unfinished.length) console.log(`\nnot completed: ${unfinished.map((u) => `${u.state} ${u.n}`).join(', ')}`);
  } finally {
    await connection.close();
    process.kill(platform.pid, 'SIGTERM');
    const { output } = await platform.finished;
    if (process.env.BENCH_VERBOSE) log(output);
    await dropDatabase(cluster.adminUrl, DATABASE);
    await temporal.stop();
  }
}

await main();
