import type { Db } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import type { Embedder } from './embeddings.ts';
import { fuse, vectorScore, type FusionWeights } from './fusion.ts';
import { parseOrThrow } from './search-input.ts';
import { chunksByIds, fulltextSearch, type Bm25Parameters, type ChunkFilters, type ScoredChunk } from './search.repo.ts';
import {
  ResourceSearchInputSchema,
  SearchQuerySchema,
  type Hit,
  type ParsedSearchQuery,
  type ResourceSearchInput,
  type ResourceSearchResult,
  type SearchQuery,
  type SearchTenant,
} from './search.schema.ts';
import type { VectorStore } from './vector-store.ts';

/** Candidates each mode brings to hybrid fusion, at least. */
const FUSION_CANDIDATES = 100;

function toHit({ chunkId: _chunkId, ...hit }: ScoredChunk, score: number): Hit {
  return { ...hit, score };
}

/**
 * Searches of a tenant's chunks: full text (BM25), vectors, or their fusion (hybrid), and the v4
 * resource search over resource projections. Without a usable vector store (`vectorStore`
 * answers none) hybrid is full text and vector search is refused.
 */
export function createSearchQueries(deps: {
  db: Db;
  bm25: Bm25Parameters;
  fusion: FusionWeights;
  embedder: Embedder | undefined;
  /** The vector store, when there is one and it can be used. */
  vectorStore: () => Promise<VectorStore | undefined>;
  objectTypes?: Pick<ObjectTypesService, 'find'>;
}) {
  const { db, bm25, fusion, embedder, vectorStore } = deps;
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
    search,

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
  };
}
