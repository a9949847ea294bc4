import type { Db } from '../db/client.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import type { Embedder } from './embeddings.ts';
import { createEmbeddingBacklog } from './embedding-backlog.ts';
import { DEFAULT_FUSION, type FusionWeights } from './fusion.ts';
import { createSearchQueries } from './search-queries.ts';
import { createSearchSources } from './search-sources.ts';
import { refusedChunks, type Bm25Parameters } from './search.repo.ts';
import type { VectorStore } from './vector-store.ts';

export type SearchService = ReturnType<typeof createSearchService>;

/** BM25 parameters: k1 0.9 and b 0.4 (Anserini's defaults), which rank SciFact best here (docs/benchmarks.md). */
export const DEFAULT_BM25: Bm25Parameters = { k1: 0.9, b: 0.4 };

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

  const backlog = embedder ? createEmbeddingBacklog({ db, embedder, store: vectorStore, batch: deps.backlogBatch, log }) : undefined;
  const kickBacklog = (delayMs?: number) => backlog?.kick(delayMs);

  kickBacklog(1_000);

  const sources = createSearchSources({ db, embedder, vectors: deps.vectors, vectorStore, kickBacklog: () => kickBacklog(), log });
  const queries = createSearchQueries({ db, bm25, fusion, embedder, vectorStore, objectTypes: deps.objectTypes });

  return {
    replaceSourceIn: sources.replaceSourceIn,
    removeSourceIn: sources.removeSourceIn,
    resourceIndex: sources.resourceIndex,
    searchResources: queries.searchResources,
    replaceSource: sources.replaceSource,
    removeSource: sources.removeSource,

    /** The caller's tenant's chunks that best answer `query`, best first, scores 0..1. */
    search: queries.search,

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
