import type { Db, Tx } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { projectResource } from './resource-projection.ts';
import type { Embedder } from './embeddings.ts';
import { createEmbeddingBacklog } from './embedding-backlog.ts';
import { DEFAULT_FUSION, fuse, vectorScore, type FusionWeights } from './fusion.ts';
import {
  chunksByIds,
  fulltextSearch,
  refusedChunks,
  removeSourceChunks,
  replaceSourceChunks,
  sourceChunkIds,
  type Bm25Parameters,
  type ChunkFilters,
  type ScoredChunk,
} from './search.repo.ts';
import {
  ChunkSchema,
  ResourceSearchInputSchema,
  SearchQuerySchema,
  SourceRefSchema,
  SourceSchema,
  type ChunkInput,
  type Hit,
  type ParsedSearchQuery,
  type ResourceSearchInput,
  type ResourceSearchResult,
  type SearchQuery,
  type SearchTenant,
  type Source,
  type SourceRef,
} from './search.schema.ts';
import type { VectorStore } from './vector-store.ts';

export type SearchService = ReturnType<typeof createSearchService>;

/** BM25 parameters: k1 0.9 and b 0.4 (Anserini's defaults), which rank SciFact best here (docs/benchmarks.md). */
export const DEFAULT_BM25: Bm25Parameters = { k1: 0.9, b: 0.4 };

/** Candidates each mode brings to hybrid fusion, at least. */
const FUSION_CANDIDATES = 100;

const UNPAIRED_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL can store (extracted text may hold anything): NUL characters dropped, unpaired surrogates replaced. */
function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(UNPAIRED_SURROGATES, '\uFFFD');
}

function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, v]) => [storableText(key), storableValue(v)]));
  return value;
}

function parseOrThrow<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw ValidationError.field(issue.path.map(String).join('.') || '(input)', issue.message);
}

function toHit({ chunkId: _chunkId, ...hit }: ScoredChunk, score: number): Hit {
  return { ...hit, score };
}

export interface SearchServiceDeps {
  db: Db;
  bm25?: Bm25Parameters;
  fusion?: FusionWeights;
  /** Null or omitted with `vectors`: full-text search only. */
  embedder?: Embedder | null;
  vectors?: VectorStore | null;
  /** Resolves the object types a resource search names (keys or names). */
  objectTypes?: Pick<ObjectTypesService, 'find'>;
  /** Chunks of one tenant the embedding backlog embeds per turn (default 64). */
  backlogBatch?: number;
  log?: (message: string, detail?: unknown) => void;
}

/**
 * The search index of documents and resource projections, per tenant: full-text ranking by BM25
 * over the tenant's own term statistics, vectors of an embedding model in a vector store, and
 * their weighted fusion. Every operation runs in a transaction of the caller's tenant (row-level
 * security) and every vector query carries the tenant, so nothing crosses tenants. Without a
 * usable vector store, hybrid search is full-text search and vector search is refused
 * (docs/decisions/0083-vector-stores.md).
 */
export function createSearchService(deps: SearchServiceDeps) {
  const { db } = deps;
  const bm25 = deps.bm25 ?? DEFAULT_BM25;
  const fusion = deps.fusion ?? DEFAULT_FUSION;
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[search] ${message}`, detail ?? ''));
  const embedder = deps.embedder ?? undefined;

  let storeReady: Promise<VectorStore | undefined> | undefined;
  /** The vector store, when there is one and it can be used (asked once). */
  const vectorStore = () =>
    (storeReady ??= (async () => {
      if (!embedder || !deps.vectors) return undefined;
      return (await deps.vectors.available()) ? deps.vectors : undefined;
    })().catch((error: unknown) => {
      storeReady = undefined;
      throw error;
    }));

  function checkedChunks(chunks: ChunkInput[]) {
    if (!Array.isArray(chunks)) throw ValidationError.field('chunks', 'must be an array');
    return chunks.map((chunk) => {
      const parsed = parseOrThrow(ChunkSchema, chunk);
      return { content: storableText(parsed.content), metadata: storableValue(parsed.metadata) as Record<string, unknown> };
    });
  }

  const backlog = embedder ? createEmbeddingBacklog({ db, embedder, store: vectorStore, batch: deps.backlogBatch, log }) : undefined;
  const kickBacklog = (delayMs?: number) => backlog?.kick(delayMs);

  kickBacklog(1_000);

  /**
   * Replaces the chunks of `source` inside the caller's transaction `tx` (which must be the
   * source's tenant's): their full text is searchable when `tx` commits, their vectors follow
   * through the embedding backlog.
   */
  async function replaceSourceIn(tx: Tx, source: Source, chunks: ChunkInput[]): Promise<{ chunkCount: number }> {
    const checked = parseOrThrow(SourceSchema, source);
    const chunkCount = await replaceSourceChunks(tx, checked, checkedChunks(chunks));
    if (chunkCount > 0 && embedder && deps.vectors) kickBacklog();
    return { chunkCount };
  }

  async function removeSourceIn(tx: Tx, source: SourceRef): Promise<void> {
    await removeSourceChunks(tx, parseOrThrow(SourceRefSchema, source));
  }

  /** The query's vector, with the store prepared for it (outside any transaction). */
  async function embedQuery(store: VectorStore, query: string): Promise<number[]> {
    const [vector] = await embedder!.embed([query]);
    await store.prepare(embedder!.model, vector!.length);
    return vector!;
  }

  async function vectorSearch(tenantId: string, store: VectorStore, input: ParsedSearchQuery, filters: ChunkFilters): Promise<Hit[]> {
    const vector = await embedQuery(store, input.query);
    return db.inTenant(tenantId, async (tx) => {
      const near = (await store.nearest(tx, tenantId, { vector, model: embedder!.model, limit: input.limit, filters }))
        .map((n) => ({ ...n, score: vectorScore(n.similarity) }))
        .filter((n) => n.score >= (input.minScore ?? 0));
      const rows = new Map((await chunksByIds(tx, near.map((n) => n.chunkId))).map((row) => [row.chunkId, row]));
      return near.flatMap((n) => (rows.has(n.chunkId) ? [toHit(rows.get(n.chunkId)!, n.score)] : []));
    });
  }

  async function hybridSearch(tenantId: string, store: VectorStore, input: ParsedSearchQuery, filters: ChunkFilters): Promise<Hit[]> {
    const vector = await embedQuery(store, input.query);
    const candidates = Math.max(FUSION_CANDIDATES, input.limit * 5);
    return db.inTenant(tenantId, async (tx) => {
      const textual = await fulltextSearch(tx, { query: input.query, limit: candidates, filters, bm25 });
      const near = await store.nearest(tx, tenantId, { vector, model: embedder!.model, limit: candidates, filters });
      const textScores = new Map(textual.map((hit) => [hit.chunkId, hit.score]));
      const vectorScores = new Map(near.map((n) => [n.chunkId, n.similarity]));
      // Each side's candidates scored exactly by the other side.
      const onlyNear = near.map((n) => n.chunkId).filter((id) => !textScores.has(id));
      const onlyText = textual.map((h) => h.chunkId).filter((id) => !vectorScores.has(id));
      if (onlyNear.length) for (const hit of await fulltextSearch(tx, { query: input.query, limit: onlyNear.length, filters, bm25, chunkIds: onlyNear })) textScores.set(hit.chunkId, hit.score);
      for (const n of await store.similarities(tx, tenantId, { vector, model: embedder!.model }, onlyText)) vectorScores.set(n.chunkId, n.similarity);
      // A candidate with no term of the query and no positive similarity (a nearest neighbour of nothing alike) is no match.
      const ranked = fuse(textScores, vectorScores, fusion)
        .filter((r) => r.score > 0 && r.score >= (input.minScore ?? 0))
        .slice(0, input.limit);
      const rows = new Map([...textual.map((row) => [row.chunkId, row] as const)]);
      const missing = ranked.filter((r) => !rows.has(r.chunkId)).map((r) => r.chunkId);
      if (missing.length) for (const row of await chunksByIds(tx, missing)) rows.set(row.chunkId, row);
      return ranked.flatMap((r) => (rows.has(r.chunkId) ? [toHit(rows.get(r.chunkId)!, r.score)] : []));
    });
  }

  async function search(tenant: SearchTenant, query: SearchQuery): Promise<Hit[]> {
    const input = parseOrThrow(SearchQuerySchema, query);
    const filters = { kinds: input.kinds, types: input.types, sourceIds: input.sourceIds };
    const store = input.mode === 'fulltext' ? undefined : await vectorStore();
    if (input.mode === 'vector' && !store) {
      throw ValidationError.field('mode', 'vector search is not available here: no vector store is configured (pgvector extension or QDRANT_URL)');
    }
    if (store && input.mode === 'vector') return vectorSearch(tenant.tenantId, store, input, filters);
    if (store && input.mode === 'hybrid') return hybridSearch(tenant.tenantId, store, input, filters);
    const hits = await db.inTenant(tenant.tenantId, (tx) => fulltextSearch(tx, { query: input.query, limit: input.limit, minScore: input.minScore, filters, bm25 }));
    return hits.map((hit) => toHit(hit, hit.score));
  }

  /** The object type keys that `types` (keys or names) name in the tenant; 400 naming the first unknown one. */
  async function typeKeys(tenantId: string, types: string[]): Promise<string[]> {
    const finder = deps.objectTypes;
    if (!finder) return types;
    return db.inTenant(tenantId, async (tx) => {
      const keys: string[] = [];
      for (const [i, name] of types.entries()) {
        const objectType = await finder.find(tx, name);
        if (!objectType) throw ValidationError.field(`types.${i}`, `"${name}" is not an object type of this tenant`);
        keys.push(objectType.key);
      }
      return keys;
    });
  }

  return {
    replaceSourceIn,
    removeSourceIn,

    /**
     * The resource engine's search projection (resources/resource-ops.ts): a resource of a type
     * with `searchFields` is one chunk of those fields' values, replaced in the write's own
     * transaction; a delete removes it. Types without `searchFields` cost nothing.
     */
    resourceIndex: {
      async written(tx: Tx, objectType: ObjectType, resource: { id: string; data: Record<string, unknown> }): Promise<void> {
        if (objectType.searchFields.length === 0) return;
        const { content, fields } = projectResource(resource.data, objectType.searchFields);
        const source = { kind: 'resource', id: resource.id, type: objectType.key } as const;
        await replaceSourceIn(tx, source, content ? [{ content, metadata: { fields } }] : []);
      },
      async deleted(tx: Tx, _type: string, id: string): Promise<void> {
        await removeSourceIn(tx, { kind: 'resource', id });
      },
    },

    /** The tenant's resources whose projection best answers the query (v4 resource search). */
    async searchResources(tenant: SearchTenant, request: ResourceSearchInput): Promise<ResourceSearchResult> {
      const input = parseOrThrow(ResourceSearchInputSchema, request);
      const types = input.types && [...new Set(await typeKeys(tenant.tenantId, input.types))];
      const mode = input.mode === 'hybrid' && !(await vectorStore()) ? 'fulltext' : input.mode;
      const hits = await search(tenant, { query: input.query, mode, limit: input.limit, kinds: ['resource'], types });
      return {
        mode,
        data: hits.map((hit) => ({
          id: hit.sourceId,
          objectType: hit.sourceType,
          score: hit.score,
          fields: (hit.metadata.fields as Record<string, unknown> | undefined) ?? {},
          content: hit.content,
        })),
      };
    },

    /**
     * Replaces every chunk of `source` (idempotent: twice leaves one copy), embeds them and makes
     * them searchable: when it returns, full text and vectors are both in place. Should the
     * embedding model fail, the chunks are stored without vectors and the backlog embeds them later.
     */
    async replaceSource(tenant: SearchTenant, source: Source, chunks: ChunkInput[]): Promise<{ chunkCount: number }> {
      const checkedSource = parseOrThrow(SourceSchema, source);
      const checked = checkedChunks(chunks);
      const store = await vectorStore();
      let vectors: number[][] | undefined;
      if (store && checked.length) {
        vectors = await embedder!.embed(checked.map((c) => c.content)).catch((error: unknown) => {
          log(`embedding ${checkedSource.kind} ${checkedSource.id} failed; its vectors follow through the backlog`, error);
          return undefined;
        });
        for (const dimensions of new Set(vectors?.map((v) => v.length))) await store.prepare(embedder!.model, dimensions);
      }
      const { chunkCount, ids } = await db.inTenant(tenant.tenantId, async (tx) => {
        const count = await replaceSourceChunks(tx, checkedSource, checked);
        if (!store || !vectors) return { chunkCount: count, ids: undefined };
        const chunkIds = await sourceChunkIds(tx, checkedSource);
        await store.save(
          tx,
          tenant.tenantId,
          embedder!.model,
          chunkIds.map((chunkId, i) => ({ chunkId, kind: checkedSource.kind, sourceId: checkedSource.id, sourceType: checkedSource.type, vector: vectors[i]! })),
        );
        return { chunkCount: count, ids: chunkIds };
      });
      if (store && ids) await store.forgetSource(tenant.tenantId, checkedSource, ids);
      else if (store && chunkCount > 0) kickBacklog();
      return { chunkCount };
    },

    /** Removes every chunk of the source, and its vectors; a source with none is a no-op. */
    async removeSource(tenant: SearchTenant, source: SourceRef): Promise<void> {
      const checked = parseOrThrow(SourceRefSchema, source);
      await db.inTenant(tenant.tenantId, (tx) => removeSourceIn(tx, checked));
      const store = await vectorStore();
      if (store) await store.forgetSource(tenant.tenantId, checked, []);
    },

    /** The caller's tenant's chunks that best answer `query`, best first, scores 0..1. */
    search,

    /** The tenant's chunks the embedding model refused, which have no vector (the storage doctor reports them). */
    refusedChunks: (tenantId: string) => db.inTenant(tenantId, (tx) => refusedChunks(tx)),

    /** Whether vector and hybrid search use vectors here (false: full text only). */
    vectorsAvailable: async (): Promise<boolean> => !!(await vectorStore()),

    /** Embeds every chunk still without a vector now; resolves when none is left but those the model refused (tests, benchmarks). */
    async drainBacklog(): Promise<void> {
      await backlog?.drainAll();
    },
  };
}
