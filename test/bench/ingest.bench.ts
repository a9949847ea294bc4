/**
 * `npm run bench:ingest`: pages per second from upload to searchable for a batch of PDFs through
 * the REST API (v3 `POST /documents` with `autoIndex`, the platform as `npm start` runs it: edge
 * and control plane on Bun, the worker a Node process), against each stage run alone on the same
 * files in this process (upload without processing, extraction, chunking, embedding and storing
 * through the search service). Target: pipeline >= 0.8 x the slowest stage alone. Then one upload
 * of a 100 MB file, sampling the edge process's resident memory: target growth under 32 MB.
 * Settings: BENCH_PDFS (default 12), BENCH_PAGES (pages per PDF, default 8), BENCH_CONCURRENCY
 * (uploads at once, default 4).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { createDb } from '../../control-plane/db/client.ts';
import { chunkSegments, type DocumentChunk } from '../../control-plane/documents/chunking.ts';
import { CHUNKING } from '../../control-plane/documents/documents.schema.ts';
import { createExtractor } from '../../control-plane/extract/extractor.ts';
import { searchVectorsFromEnv } from '../../control-plane/search/search-config.ts';
import { createSearchService } from '../../control-plane/search/search.service.ts';
import { MAX_UPLOAD_BYTES } from '../../control-plane/uploads/uploads.schema.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { dropDatabase } from '../../scripts/stack/postgres.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { ensureSearchAttributes, ensureTemporalDevServer, PLATFORM_SEARCH_ATTRIBUTES } from '../../scripts/stack/temporal.ts';
import { benchCluster, benchDatabase, withSql } from './bench-db.ts';
import { start } from './child.ts';
import { residentBytes } from './process-cpu.ts';
import { pdf } from '../../control-plane/extract/fixtures/pdf-writer.ts';

const PDFS = Number(process.env.BENCH_PDFS ?? 12);
const PAGES = Number(process.env.BENCH_PAGES ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const DATABASE = 'svc_bench_ingest';
const TASK_QUEUE = 'bench-ingest';
const USER = 'admin@acme.test';
const V3 = '/api/svc/v3';
const MB = 1024 * 1024;
const log = (message: string) => process.stderr.write(`${message}\n`);

const WORDS = 'quarterly turnover lease office harbour invoice contract clause budget audit supplier shipment forecast margin review board pilot customer milestone renewal'.split(' ');

/** `count` PDFs of `pages` pages, each page about 40 lines of report-like text (a few hundred tokens). */
function makePdfs(count: number, pages: number): Buffer[] {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: count }, (_, d) =>
    pdf(
      Array.from({ length: pages }, (_, p) => Array.from({ length: 40 }, (_, l) => `Report ${d} page ${p + 1} line ${l}: ${Array.from({ length: 9 }, () => WORDS[next() % WORDS.length]).join(' ')}.`)),
      { fontSize: 11, leading: 14, left: 56, top: 760 },
    ),
  );
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 900; i++) {
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`platform did not become healthy at ${url}`);
}

/** Runs `task` over `items`, `concurrency` at a time. */
async function pool<T>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  }));
}

interface Stage {
  name: string;
  seconds: number;
}

async function main(): Promise<void> {
  const cluster = await benchCluster(log);
  const { url, tenantUrl } = await benchDatabase(cluster, DATABASE);
  const temporal = await ensureTemporalDevServer({ name: 'temporal-bench', port: 27259, log });
  await ensureSearchAttributes({ cli: temporal.cli, address: temporal.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });
  const blobDir = mkdtempSync(join(tmpdir(), 'svc-bench-blobs-'));

  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  log(`starting the platform as npm start runs it (edge and control plane on Bun, the worker a Node process) on ${origin}`);
  const platform = start(bunExecutable(), ['scripts/start.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      ...(tenantUrl ? { TENANT_DATABASE_URL: tenantUrl } : {}),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      SVC_BLOB_DIR: blobDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: origin,
      RATE_LIMIT_API_PER_MINUTE: '1000000000',
      RATE_LIMIT_UPLOADS_PER_MINUTE: '1000000000',
    },
  });
  const db = createDb(url, { tenantDatabaseUrl: tenantUrl });
  try {
    await waitForHealth(origin);
    // The development tenant's plan allows 10 MB files; the 100 MB upload needs the team plan.
    const tenantId = await withSql(url, async (sql) => (await sql<{ id: string }[]>`update tenants set plan = 'team' where slug = 'acme' returning id::text as id`)[0]!.id);
    const token = (await loginWithPkce({ issuer: origin, email: USER })).accessToken;
    const auth = { authorization: `Bearer ${token}` };
    const upload = async (bytes: Uint8Array, filename: string, fields: Record<string, string>) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append('file', new Blob([bytes], { type: 'application/pdf' }), filename);
      const response = await fetch(`${origin}${V3}/documents`, { method: 'POST', headers: auth, body: form });
      const body = (await response.json()) as { id: string; error?: unknown };
      if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${JSON.stringify(body)}`);
      return body.id;
    };
    const remove = (id: string) => fetch(`${origin}${V3}/documents/${id}`, { method: 'DELETE', headers: auth });
    const count = async (query: string) => ((await (await fetch(`${origin}${V3}/documents?${query}&limit=1`, { headers: auth })).json()) as { total: number }).total;

    const files = makePdfs(PDFS, PAGES);
    const pages = PDFS * PAGES;
    log(`${PDFS} PDFs of ${PAGES} pages (${(files.reduce((n, f) => n + f.length, 0) / 1024).toFixed(0)} KiB)`);

    // Each stage alone, on the same files.
    const stages: Stage[] = [];
    const time = async (name: string, run: () => Promise<void>) => {
      const began = performance.now();
      await run();
      stages.push({ name, seconds: (performance.now() - began) / 1000 });
      log(`${name}: ${stages.at(-1)!.seconds.toFixed(2)} s`);
    };
    const uploaded: string[] = [];
    await time('upload (stored, no processing)', () => pool(files, CONCURRENCY, async (file, i) => void uploaded.push(await upload(file, `alone-${i}.pdf`, {}))));
    for (const id of uploaded) await remove(id);
    const extractor = createExtractor();
    const segments: Awaited<ReturnType<typeof extractor.extract>>['segments'][] = [];
    await time('extract (unpdf)', async () => {
      for (const [i, file] of files.entries()) segments.push((await extractor.extract({ bytes: file, filename: `alone-${i}.pdf` })).segments);
    });
    await extractor.close();
    const chunks: DocumentChunk[][] = [];
    await time('chunk (gpt-tokenizer)', async () => {
      for (const each of segments) chunks.push(chunkSegments(each, { chunkSize: CHUNKING.defaultSize, chunkOverlap: CHUNKING.defaultOverlap }));
    });
    const search = createSearchService({ db, ...searchVectorsFromEnv(db) });
    // The model loads on first use, in the worker as here: loaded before timing, like the pipeline's warm-up.
    await search.replaceSource({ tenantId }, { kind: 'document', id: 'bench-warm-up', type: 'general' }, [{ content: 'warm up', metadata: {} }]);
    await search.removeSource({ tenantId }, { kind: 'document', id: 'bench-warm-up' });
    await time('embed and store (search service)', async () => {
      for (const [i, each] of chunks.entries()) await search.replaceSource({ tenantId }, { kind: 'document', id: `bench-alone-${i}`, type: 'general' }, each);
    });
    for (const i of chunks.keys()) await search.removeSource({ tenantId }, { kind: 'document', id: `bench-alone-${i}` });

    // The pipeline: upload with autoIndex until every document is ready (searchable).
    log('warm-up: one document through the pipeline (the worker loads the model)');
    const warm = await upload(files[0]!, 'warm-up.pdf', { autoIndex: 'true', tags: 'warm-up' });
    while ((await count('tags=warm-up&status=ready')) === 0) await new Promise((r) => setTimeout(r, 200));
    await remove(warm);
    const run = `ingest-${randomUUID().slice(0, 8)}`;
    log(`pipeline: ${PDFS} uploads with autoIndex, ${CONCURRENCY} at a time, until all are ready`);
    const began = performance.now();
    await pool(files, CONCURRENCY, async (file, i) => void (await upload(file, `report-${i}.pdf`, { autoIndex: 'true', tags: run })));
    for (;;) {
      const [ready, failed] = [await count(`tags=${run}&status=ready&indexed=true`), await count(`tags=${run}&status=failed`)];
      if (failed) throw new Error(`${failed} document(s) failed`);
      if (ready === PDFS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const pipelineSeconds = (performance.now() - began) / 1000;

    // One 100 MB file, streamed; the edge process's resident memory sampled meanwhile.
    const boundary = `----bench-${randomUUID()}`;
    const streamedUpload = async (size: number) => {
      const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.txt"\r\nContent-Type: text/plain\r\n\r\n`);
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const piece = Buffer.alloc(MB, 0x61);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(head),
        pull: (controller) => {
          if (sent >= size) {
            controller.enqueue(tail);
            return controller.close();
          }
          const part = piece.subarray(0, Math.min(MB, size - sent));
          sent += part.length;
          controller.enqueue(part);
        },
      });
      const response = await fetch(`${origin}${V3}/documents`, {
        method: 'POST',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
        body,
        duplex: 'half',
      });
      const answer = (await response.json()) as { id: string };
      if (response.status !== 201) throw new Error(`the large upload answered ${response.status}: ${JSON.stringify(answer)}`);
      await remove(answer.id);
    };
    await streamedUpload(8 * MB);
    /** One 100 MB upload: its time, and the edge's resident memory before it and at its peak. */
    const measureLarge = async () => {
      await new Promise((r) => setTimeout(r, 1000));
      const baseline = residentBytes(platform.pid);
      if (!baseline) throw new Error('the platform process is gone');
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(platform.pid))), 20);
      const began = performance.now();
      await streamedUpload(MAX_UPLOAD_BYTES);
      clearInterval(sampler);
      peak = Math.max(peak, residentBytes(platform.pid));
      if (!residentBytes(platform.pid)) throw new Error('the platform process ended during the large upload');
      return { seconds: (performance.now() - began) / 1000, baseline, peak };
    };
    const large = await measureLarge();
    // A second one: what a process that has served a large upload before grows by.
    const again = await measureLarge();

    const rate = (seconds: number) => pages / seconds;
    const slowest = stages.reduce((a, b) => (a.seconds > b.seconds ? a : b));
    const ratio = rate(pipelineSeconds) / rate(slowest.seconds);
    const growthMb = (large.peak - large.baseline) / MB;
    const rows = [...stages.map((s) => [`${s.name}, alone`, s.seconds.toFixed(2), rate(s.seconds).toFixed(1)]), ['upload to searchable (pipeline)', pipelineSeconds.toFixed(2), rate(pipelineSeconds).toFixed(1)]];
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['stage', 'seconds', 'pages/s'][i]!.length));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(`\nmachine: nproc ${availableParallelism()}, edge and control plane on Bun, the worker on Node; ${PDFS} PDFs x ${PAGES} pages, ${CONCURRENCY} uploads at a time`);
    console.log([line(['stage', 'seconds', 'pages/s']), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n'));
    console.log(`\npipeline / slowest stage alone (${slowest.name}): ${ratio.toFixed(3)} (target >= 0.80: ${ratio >= 0.8 ? 'PASS' : 'MISS'})`);
    console.log(`100 MB upload: ${large.seconds.toFixed(2)} s; edge resident memory ${(large.baseline / MB).toFixed(1)} MB -> peak ${(large.peak / MB).toFixed(1)} MB, growth ${growthMb.toFixed(1)} MB (target < 32 MB: ${growthMb < 32 ? 'PASS' : 'MISS'})`);
    console.log(`a second 100 MB upload: ${again.seconds.toFixed(2)} s; ${(again.baseline / MB).toFixed(1)} MB -> peak ${(again.peak / MB).toFixed(1)} MB, growth ${((again.peak - again.baseline) / MB).toFixed(1)} MB (info)`);
  } finally {
    await db.close();
    process.kill(platform.pid, 'SIGTERM');
    const { code, output } = await platform.finished;
    if (process.env.BENCH_VERBOSE || (code !== 0 && code !== null && code !== 143)) log(output.slice(-4000));
    await dropDatabase(cluster.adminUrl, DATABASE);
    rmSync(blobDir, { recursive: true, force: true });
    await temporal.stop();
  }
}

await main();
