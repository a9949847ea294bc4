/**
 * `npm run bench:chat`: AI chat through the edge against the same work in-process.
 *
 * 1. Time to first event and full-answer time of `POST /api/svc/v3/chat` through the edge (a
 *    Bun process running `main.ts --role all`: the edge runs on Bun under `npm start` and in the
 *    chart), read with undici's `request` (Node's `fetch` adds about 0.8 ms of its own to every
 *    request, which is the client's, not the edge's), against the same call in this process on
 *    the same database and data: the `chat.send` procedure through the
 *    in-process control-plane port (the caller's identity resolved, limits, conversation
 *    storage, retrieval, the answer: all the edge's call does but HTTP, authentication, rate
 *    limiting and SSE); the chat service with the caller already resolved; and the answering
 *    service alone. Requests alternate between the paths, one at a time. Target: the edge adds
 *    <= 2 ms to the time to first event at p50 (edge against the in-process procedure).
 * 2. 100 concurrent streams of one tenant, held open by the model midway, then finished: every
 *    one must end with `done`; a 101st is refused with 429 meanwhile. Prints the platform
 *    process's (edge and control plane) resident memory per open stream: with the streams open,
 *    less before they opened (Bun collects garbage when it chooses, so the figure includes some).
 *
 * The model is an OpenAI-compatible endpoint in this process (test/harness/openai-compatible-endpoint.ts,
 * answering at once unless told to hold), for both paths; retrieval is full-text search over the
 * tenant's indexed chunks (SEARCH_VECTORS=off on both paths, so that no embedding model runs).
 * Settings: BENCH_CHAT_REQUESTS (200 per path), BENCH_CHAT_STREAMS (100).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { request } from 'undici';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { createLocalDirectoryBlobStore } from '../../control-plane/blobs/local-directory.ts';
import { createDb } from '../../control-plane/db/client.ts';
import { createInProcessControlPlane } from '../../control-plane/app/in-process.ts';
import { apiServicesOf, createServices } from '../../control-plane/app/services.ts';
import { dropDatabase } from '../../scripts/stack/postgres.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { benchCluster, benchDatabase, withSql } from './bench-db.ts';
import { start } from './child.ts';
import { quantile } from './latency.ts';
import { residentBytes } from './process-cpu.ts';
import { runBenchmark } from './settings.ts';

const REQUESTS = Number(process.env.BENCH_CHAT_REQUESTS ?? 200);
const STREAMS = Number(process.env.BENCH_CHAT_STREAMS ?? 100);
const WARMUP = 20;
const DATABASE = 'svc_bench_chat';
const USER = DEV_USERS.find((u) => u.email === 'admin@acme.test')!;
const QUESTIONS = ['How much notice do vacation requests need?', 'When are expenses reimbursed?', 'Who approves travel?', 'When does the office open?'];
const log = (message: string) => process.stderr.write(`${message}\n`);

interface Timing {
  firstEventMs: number;
  fullMs: number;
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`platform did not become healthy at ${url}`);
}

/**
 * One chat request through the edge, read with an SSE parser: times to the first event and to
 * `done`; `onFirstPiece` is told when the first `message` event has arrived.
 */
async function askEdge(origin: string, token: string, message: string, onFirstPiece?: () => void): Promise<Timing & { status: number; last?: string }> {
  const started = performance.now();
  const response = await request(`${origin}/api/svc/v3/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ message }),
  });
  if (response.statusCode !== 200) {
    await response.body.text();
    return { status: response.statusCode, firstEventMs: Number.NaN, fullMs: Number.NaN };
  }
  let firstEventMs = Number.NaN;
  let last: string | undefined;
  let sawPiece = false;
  const parser = createParser({
    onEvent: (event) => {
      if (Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
      last = (JSON.parse(event.data) as { type: string }).type;
      if (last === 'message' && !sawPiece) {
        sawPiece = true;
        onFirstPiece?.();
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return { status: 200, firstEventMs, fullMs: performance.now() - started, last };
}

const summary = (label: string, timings: Timing[]) => {
  const first = Float64Array.from(timings.map((t) => t.firstEventMs));
  const full = Float64Array.from(timings.map((t) => t.fullMs));
  return { label, firstP50: quantile(first, 0.5), firstP99: quantile(first, 0.99), fullP50: quantile(full, 0.5), fullP99: quantile(full, 0.99) };
};

async function main(): Promise<void> {
  const cluster = await benchCluster(log);
  const { url, tenantUrl } = await benchDatabase(cluster, DATABASE);
  const endpoint = await startScriptedEndpoint();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  log(`starting the platform (bun main.ts --role all) on ${origin}`);
  const platform = start(bunExecutable(), ['main.ts', '--role', 'all'], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}),
      TEMPORAL_ADDRESS: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: origin,
      SEARCH_VECTORS: 'off',
      AI_BASE_URL: endpoint.settings.baseUrl,
      AI_API_KEY: endpoint.settings.apiKey,
      AI_MODEL: endpoint.settings.model,
      RATE_LIMIT_RESOURCES_PER_MINUTE: '1000000000',
      RATE_LIMIT_API_PER_MINUTE: '1000000000',
      KUBECONFIG: '/nonexistent',
    },
  });
  const db = createDb(url, { tenantDatabaseUrl: tenantUrl });
  try {
    await Promise.race([waitForHealth(origin), platform.finished.then(({ output }) => Promise.reject(new Error(`the platform exited:\n${output.slice(-2000)}`)))]);
    const tenantId = await withSql(url, async (sql) => {
      const [acme] = await sql<[{ id: string }]>`update tenants set plan = 'enterprise' where slug = 'acme' returning id::text as id`;
      return acme.id;
    });
    const services = createServices({ db, blobs: createLocalDirectoryBlobStore(mkdtempSync(join(tmpdir(), 'bench-chat-'))), ai: endpoint.settings, searchVectors: { embedder: null, vectors: null } });
    for (let i = 0; i < 50; i++) {
      await services.search.replaceSource({ tenantId }, { kind: 'document', id: `handbook-${i}`, type: 'handbook' }, [
        { content: `Section ${i}. Vacation requests need ${i + 1} weeks notice. Expenses are reimbursed monthly. Travel is approved by the team lead of unit ${i}.`, metadata: { pageNumber: i + 1 } },
        { content: `The office of unit ${i} opens at ${7 + (i % 3)}am. Parking is free for employees.`, metadata: { pageNumber: i + 2 } },
      ]);
    }
    const token = (await loginWithPkce({ issuer: origin, email: USER.email })).accessToken;
    const actor = await services.identity.resolveActor({ sub: USER.sub, email: USER.email, emailVerified: true, name: USER.name, tenant: 'acme' }, undefined);

    const port = createInProcessControlPlane(apiServicesOf(services));
    const identity = { sub: USER.sub, email: USER.email, emailVerified: true, name: USER.name, tenant: 'acme' };
    const viaPort = async (message: string): Promise<Timing> => {
      const started = performance.now();
      let firstEventMs = Number.NaN;
      for await (const item of port.subscription({ identity }, 'chat', 'send', { message })) {
        if ('started' in item) continue;
        if (Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
        if (item.event.type === 'done' || item.event.type === 'error') break;
      }
      return { firstEventMs, fullMs: performance.now() - started };
    };
    const inProcess = async (message: string): Promise<Timing> => {
      const started = performance.now();
      let firstEventMs = Number.NaN;
      for await (const item of services.chat.send(actor, { message, options: { temperature: 0.7, maxTokens: 512, context: { resources: [], documents: [] } } })) {
        if ('started' in item) continue;
        if (Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
        if (item.event.type === 'done' || item.event.type === 'error') break;
      }
      return { firstEventMs, fullMs: performance.now() - started };
    };
    const answeringOnly = async (message: string): Promise<Timing> => {
      const started = performance.now();
      let firstEventMs = Number.NaN;
      for await (const _event of services.answering.answer(actor, { question: message, temperature: 0.7, maxTokens: 512, retrieval: { kinds: ['document', 'resource'], limit: 5 } })) {
        if (Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
      }
      return { firstEventMs, fullMs: performance.now() - started };
    };

    log(`phase 1: ${WARMUP} warm-up, then ${REQUESTS} requests per path, alternating, one at a time`);
    // The edge's cost on a plain authenticated read in the same run, for reference.
    const readViaEdge = async (): Promise<number> => {
      const started = performance.now();
      const response = await request(`${origin}/api/svc/v3/users/me`, { headers: { authorization: `Bearer ${token}` } });
      await response.body.text();
      return performance.now() - started;
    };
    const readViaPort = async (): Promise<number> => {
      const started = performance.now();
      await port.query({ identity }, 'users', 'get', { id: 'me' });
      return performance.now() - started;
    };
    const reads = { edge: [] as number[], port: [] as number[] };
    const edge: Timing[] = [];
    const procedure: Timing[] = [];
    const local: Timing[] = [];
    const answering: Timing[] = [];
    let edgeErrors = 0;
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      const question = QUESTIONS[i % QUESTIONS.length]!;
      const viaEdge = await askEdge(origin, token, question);
      const viaProcedure = await viaPort(question);
      const viaService = await inProcess(question);
      const viaAnswering = await answeringOnly(question);
      const readEdge = await readViaEdge();
      const readPort = await readViaPort();
      if (i < WARMUP) continue;
      reads.edge.push(readEdge);
      reads.port.push(readPort);
      if (viaEdge.status !== 200 || viaEdge.last !== 'done') edgeErrors++;
      else edge.push(viaEdge);
      procedure.push(viaProcedure);
      local.push(viaService);
      answering.push(viaAnswering);
    }
    const rows = [
      summary('edge: POST /api/svc/v3/chat over HTTP', edge),
      summary('in-process: chat.send procedure (control-plane port)', procedure),
      summary('in-process: chat service, caller resolved', local),
      summary('in-process: answering service alone', answering),
    ];
    const added = rows[0]!.firstP50 - rows[1]!.firstP50;

    log(`phase 2: ${STREAMS} concurrent streams of one tenant, held by the model midway`);
    const idle = residentBytes(platform.pid) / 1024;
    let firstPieces = 0;
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    const streams = Array.from({ length: STREAMS }, () =>
      askEdge(origin, token, 'How much notice do vacation requests need? [hold:bench]', () => {
        if (++firstPieces === STREAMS) allStarted();
      }),
    );
    await started;
    const extra = await askEdge(origin, token, 'One more?');
    const open = residentBytes(platform.pid) / 1024;
    endpoint.release('bench');
    const finished = await Promise.all(streams);
    const streamErrors = finished.filter((r) => r.status !== 200 || r.last !== 'done').length;
    const after = residentBytes(platform.pid) / 1024;

    const fixed = (n: number) => n.toFixed(2);
    console.log('\nbench:chat');
    console.log(`requests per path: ${REQUESTS} (after ${WARMUP} warm-up), one at a time; edge errors: ${edgeErrors}`);
    console.log('path | first event p50 ms | p99 ms | full answer p50 ms | p99 ms');
    for (const row of rows) console.log(`${row.label} | ${fixed(row.firstP50)} | ${fixed(row.firstP99)} | ${fixed(row.fullP50)} | ${fixed(row.fullP99)}`);
    console.log(`added time to first event at p50: ${fixed(added)} ms (target <= 2 ms: ${added <= 2 ? 'PASS' : 'MISS'})`);
    console.log(`added full-answer time at p50: ${fixed(rows[0]!.fullP50 - rows[1]!.fullP50)} ms; against the chat service with the caller resolved: first event ${fixed(rows[0]!.firstP50 - rows[2]!.firstP50)} ms`);
    const readP50 = (values: number[]) => quantile(Float64Array.from(values), 0.5);
    console.log(`for reference, GET /api/svc/v3/users/me: edge ${fixed(readP50(reads.edge))} ms, the users.get procedure in-process ${fixed(readP50(reads.port))} ms at p50 (the edge adds ${fixed(readP50(reads.edge) - readP50(reads.port))} ms)`);
    console.log(`load average while measuring: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    console.log(`${STREAMS} concurrent streams: ${STREAMS - streamErrors} ended with done, ${streamErrors} errors (target 0: ${streamErrors === 0 ? 'PASS' : 'MISS'}); one more meanwhile: ${extra.status}`);
    const mib = (kib: number) => (kib / 1024).toFixed(1);
    console.log(
      `platform resident memory: ${mib(idle)} MiB before, ${mib(open)} MiB with ${STREAMS} open streams, ${mib(after)} MiB after they ended: ${((open - idle) / STREAMS).toFixed(1)} KiB per open stream`,
    );
  } finally {
    await endpoint.close();
    process.kill(platform.pid, 'SIGTERM');
    await platform.finished.catch(() => undefined);
    await db.close();
    await dropDatabase(cluster.adminUrl, DATABASE).catch(() => undefined);
  }
}

await runBenchmark(main);
