import type { Db, Tx } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import { fulltextSearch, removeSourceChunks, replaceSourceChunks, type Bm25Parameters, type ScoredChunk } from './search.repo.ts';
import {
  ChunkSchema,
  SearchQuerySchema,
  SourceRefSchema,
  SourceSchema,
  type ChunkInput,
  type Hit,
  type SearchQuery,
  type SearchTenant,
  type Source,
  type SourceRef,
} from './search.schema.ts';

export type SearchService = ReturnType<typeof createSearchService>;

/** BM25 parameters: k1 0.9 and b 0.4 (Anserini's defaults), which rank SciFact best here (docs/benchmarks.md). */
export const DEFAULT_BM25: Bm25Parameters = { k1: 0.9, b: 0.4 };

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

function toHit({ chunkId: _chunkId, ...hit }: ScoredChunk): Hit {
  return hit;
}

/**
 * The search index of documents and resource projections, per tenant: full-text ranking by BM25
 * over the tenant's own term statistics. Every operation runs in a transaction of the caller's
 * tenant, so row-level security confines it whatever the query says.
 */
export function createSearchService(deps: { db: Db; bm25?: Bm25Parameters }) {
  const { db } = deps;
  const bm25 = deps.bm25 ?? DEFAULT_BM25;

  function checkedChunks(chunks: ChunkInput[]) {
    if (!Array.isArray(chunks)) throw ValidationError.field('chunks', 'must be an array');
    return chunks.map((chunk) => {
      const parsed = parseOrThrow(ChunkSchema, chunk);
      return { content: storableText(parsed.content), metadata: storableValue(parsed.metadata) as Record<string, unknown> };
    });
  }

  /**
   * Replaces the chunks of `source` inside the caller's transaction `tx` (which must be the
   * source's tenant's): the full text is searchable when `tx` commits, and not before.
   */
  async function replaceSourceIn(tx: Tx, source: Source, chunks: ChunkInput[]): Promise<{ chunkCount: number }> {
    const checked = parseOrThrow(SourceSchema, source);
    return { chunkCount: await replaceSourceChunks(tx, checked, checkedChunks(chunks)) };
  }

  async function removeSourceIn(tx: Tx, source: SourceRef): Promise<void> {
    await removeSourceChunks(tx, parseOrThrow(SourceRefSchema, source));
  }

  return {
    replaceSourceIn,
    removeSourceIn,

    /** Replaces every chunk of `source` (idempotent: twice leaves one copy) and makes them searchable. */
    replaceSource(tenant: SearchTenant, source: Source, chunks: ChunkInput[]): Promise<{ chunkCount: number }> {
      return db.inTenant(tenant.tenantId, (tx) => replaceSourceIn(tx, source, chunks));
    },

    /** Removes every chunk of the source; a source with none is a no-op. */
    removeSource(tenant: SearchTenant, source: SourceRef): Promise<void> {
      return db.inTenant(tenant.tenantId, (tx) => removeSourceIn(tx, source));
    },

    /** The caller's tenant's chunks that best answer `query`, best first, scores 0..1. */
    async search(tenant: SearchTenant, query: SearchQuery): Promise<Hit[]> {
      const input = parseOrThrow(SearchQuerySchema, query);
      if (input.mode === 'vector') throw ValidationError.field('mode', 'vector search is not available: no vector store is configured');
      const filters = { kinds: input.kinds, types: input.types, sourceIds: input.sourceIds };
      const hits = await db.inTenant(tenant.tenantId, (tx) => fulltextSearch(tx, { query: input.query, limit: input.limit, minScore: input.minScore, filters, bm25 }));
      return hits.map(toHit);
    },
  };
}
