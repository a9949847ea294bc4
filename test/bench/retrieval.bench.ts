/**
 * `npm run bench:retrieval -- --dataset <BEIR dir>`: indexes a BEIR-format corpus through the
 * platform's own search service (`replaceSource`, one source per corpus document, title and text
 * as one chunk, in a tenant of its own) with the embedder and vector store the environment
 * configures (the offline model and pgvector by default), and prints nDCG@10 and recall@10 of
 * fulltext, vector and hybrid search on the dataset's judgments.
 *
 * Options: `--judgments <file>` (default `<dataset>/qrels/train.tsv`), `--modes
 * fulltext,vector,hybrid`, `--limit <n>` (index the first n documents only: a smoke run),
 * `--tune` (also sweeps hybrid's full-text weight and prints each weight's figures),
 * `--no-embedding-cache` (the model's vectors of each text are otherwise kept under the cache
 * directory, so that a second run spends no time in the model). The dataset is read where it
 * lies and never copied; it stays out of the repository.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createDb, type Db } from '../../control-plane/db/client.ts';
import type { Embedder } from '../../control-plane/search/embeddings.ts';
import { DEFAULT_FUSION } from '../../control-plane/search/fusion.ts';
import { evaluateRuns, parseQrels, type Judgments } from '../../control-plane/search/retrieval-metrics.ts';
import { searchVectorsFromEnv } from '../../control-plane/search/search-config.ts';
import { SEARCH_MODES, type SearchMode } from '../../control-plane/search/search.schema.ts';
import { createSearchService, type SearchService } from '../../control-plane/search/search.service.ts';
import { cacheDir } from '../../control-plane/app/state-dir.ts';
import { benchCluster, benchDatabase, withSql } from './bench-db.ts';

const K = 10;
const DATABASE = 'svc_bench_retrieval';
const INDEX_CONCURRENCY = 4;
const TUNING_WEIGHTS = [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];
const log = (message: string) => process.stderr.write(`${message}\n`);

async function* jsonLines(file: string): AsyncGenerator<Record<string, unknown>> {
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    if (line.trim()) yield JSON.parse(line) as Record<string, unknown>;
  }
}

/**
 * The model's vectors kept per text in a file under the cache directory: the model is
 * deterministic, and a run over a corpus otherwise spends most of its time in it.
 */
function cachingEmbedder(inner: Embedder): Embedder & { hits: number; misses: number } {
  const file = join(cacheDir('retrieval-bench'), `${inner.model.replace(/[^A-Za-z0-9._-]+/g, '_')}.jsonl`);
  const known = new Map<string, number[]>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const [key, vector] = JSON.parse(line) as [string, number[]];
      known.set(key, vector);
    }
  }
  const keyOf = (text: string) => createHash('sha256').update(text).digest('base64url');
  const cache = {
    model: inner.model,
    hits: 0,
    misses: 0,
    async embed(texts: string[]) {
      const keys = texts.map(keyOf);
      const missing = [...new Set(keys.filter((k) => !known.has(k)))];
      cache.hits += keys.length - missing.length;
      cache.misses += missing.length;
      if (missing.length) {
        const byKey = new Map(texts.map((t, i) => [keys[i]!, t]));
        const vectors = await inner.embed(missing.map((k) => byKey.get(k)!));
        missing.forEach((k, i) => known.set(k, vectors[i]!));
        appendFileSync(file, missing.map((k, i) => `${JSON.stringify([k, vectors[i]])}\n`).join(''));
      }
      return keys.map((k) => known.get(k)!);
    },
  };
  return cache;
}

async function evaluate(search: SearchService, tenant: { tenantId: string }, mode: SearchMode, queries: Map<string, string>, judgments: Judgments) {
  const runs = new Map<string, string[]>();
  const started = performance.now();
  for (const [queryId, text] of queries) {
    const hits = await search.search(tenant, { query: text, mode, limit: K });
    runs.set(queryId, hits.map((h) => h.sourceId));
  }
  return { ...evaluateRuns(K, runs, judgments), msPerQuery: (performance.now() - started) / queries.size };
}

async function indexCorpus(search: SearchService, tenant: { tenantId: string }, corpusFile: string, limit: number): Promise<number> {
  let indexed = 0;
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  for await (const doc of jsonLines(corpusFile)) {
    if (indexed >= limit) break;
    const content = [doc.title, doc.text].filter((part) => typeof part === 'string' && part).join('\n');
    const job = search.replaceSource(tenant, { kind: 'document', id: String(doc._id), type: 'corpus' }, [{ content, metadata: {} }]);
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
    indexed++;
    if (inFlight.size >= INDEX_CONCURRENCY) await Promise.race(inFlight);
    if (indexed % 500 === 0) log(`indexed ${indexed} documents (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await Promise.all(inFlight);
  log(`indexed ${indexed} documents in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return indexed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dataset: { type: 'string' },
      judgments: { type: 'string' },
      modes: { type: 'string', default: SEARCH_MODES.join(',') },
      limit: { type: 'string' },
      tune: { type: 'boolean', default: false },
      'no-embedding-cache': { type: 'boolean', default: false },
    },
  });
  if (!values.dataset) throw new Error('usage: npm run bench:retrieval -- --dataset <BEIR-format directory> [--judgments file] [--modes fulltext,vector,hybrid] [--tune]');
  const dataset = values.dataset;
  const judgmentsFile = values.judgments ?? join(dataset, 'qrels', 'train.tsv');
  for (const file of [join(dataset, 'corpus.jsonl'), join(dataset, 'queries.jsonl'), judgmentsFile]) {
    if (!existsSync(file)) throw new Error(`${file} not found: --dataset must be a BEIR-format directory (corpus.jsonl, queries.jsonl, qrels/)`);
  }
  const modes = values.modes.split(',').map((m) => m.trim()) as SearchMode[];
  for (const mode of modes) if (!SEARCH_MODES.includes(mode)) throw new Error(`unknown mode ${mode}: use ${SEARCH_MODES.join(', ')}`);
  const docLimit = values.limit ? Number(values.limit) : Infinity;

  const judgments = parseQrels(readFileSync(judgmentsFile, 'utf8'));
  const queries = new Map<string, string>();
  for await (const q of jsonLines(join(dataset, 'queries.jsonl'))) if (judgments.has(String(q._id))) queries.set(String(q._id), String(q.text));

  const cluster = await benchCluster(log);
  const { url, tenantUrl } = await benchDatabase(cluster, DATABASE);
  const tenantId = await withSql(url, async (sql) => {
    const [row] = await sql<{ id: string }[]>`
      insert into tenants (slug, name, domains, usecase, starter_template, home_region, status)
      values ('retrieval-bench', 'Retrieval bench', '{}', 'generic', 'blank-vertical-template', 'eu', 'active') returning id::text as id`;
    return row!.id;
  });
  const db: Db = createDb(url, { tenantDatabaseUrl: tenantUrl });
  const configured = searchVectorsFromEnv(db, process.env, log);
  const cache = configured.embedder && !values['no-embedding-cache'] ? cachingEmbedder(configured.embedder) : undefined;
  const embedder = cache ?? configured.embedder;
  const service = (fulltextWeight = DEFAULT_FUSION.fulltext) => createSearchService({ db, embedder, vectors: configured.vectors, fusion: { fulltext: fulltextWeight }, log });
  const search = service();
  const tenant = { tenantId };
  try {
    const vectors = await search.vectorsAvailable();
    log(`vectors: ${vectors ? `${configured.vectors!.name}, model ${embedder!.model}` : 'none (full text only)'}`);
    const indexed = await indexCorpus(search, tenant, join(dataset, 'corpus.jsonl'), docLimit);
    await withSql(url, (sql) => sql.unsafe('vacuum analyze search_chunks, search_postings, search_term_stats, search_tenant_stats'));
    if (cache) log(`embeddings: ${cache.misses} computed, ${cache.hits} from the cache`);

    const lines = [`dataset ${dataset} (${indexed} documents), judgments ${judgmentsFile} (${queries.size} queries)`, 'mode      nDCG@10  recall@10  ms/query'];
    for (const mode of modes) {
      if (mode !== 'fulltext' && !vectors) {
        lines.push(`${mode.padEnd(8)}  (no vector store)`);
        continue;
      }
      const r = await evaluate(search, tenant, mode, queries, judgments);
      lines.push(`${mode.padEnd(8)}  ${r.ndcg.toFixed(4)}   ${r.recall.toFixed(4)}     ${r.msPerQuery.toFixed(1)}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    if (values.tune && vectors) {
      process.stdout.write(`\nhybrid by full-text weight w (score = w·fulltext + (1-w)·vector); default ${DEFAULT_FUSION.fulltext}\nw      nDCG@10  recall@10\n`);
      for (const w of TUNING_WEIGHTS) {
        const r = await evaluate(service(w), tenant, 'hybrid', queries, judgments);
        process.stdout.write(`${w.toFixed(2)}   ${r.ndcg.toFixed(4)}   ${r.recall.toFixed(4)}\n`);
      }
    }
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
