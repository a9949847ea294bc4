import type { Tx } from '../db/client.ts';
import type { Hit, Source, SourceKind, SourceRef } from './search.schema.ts';

/** A hit with the chunk's row id, which vectors and fusion key on. */
export interface ScoredChunk extends Hit {
  chunkId: string;
}

export interface ChunkFilters {
  kinds?: SourceKind[];
  types?: string[];
  sourceIds?: string[];
}

/** BM25's parameters: term-frequency saturation and length normalisation. */
export interface Bm25Parameters {
  k1: number;
  b: number;
}

const HIT_COLUMNS = `c.id::text as "chunkId", c.source_kind as kind, c.source_id as "sourceId", c.source_type as "sourceType",
  c.chunk_index as "chunkIndex", c.content, c.metadata`;

/** Replaces every chunk of `source` in the current tenant (none: removes it), postings and statistics with it. */
export async function replaceSourceChunks(tx: Tx, source: Source, chunks: { content: string; metadata: Record<string, unknown> }[]): Promise<number> {
  const [row] = await tx<[{ count: number }]>`
    select search_replace_source(${source.kind}, ${source.id}, ${source.type}, ${JSON.stringify(chunks)}::text::jsonb) as count`;
  return row.count;
}

export function removeSourceChunks(tx: Tx, source: SourceRef): Promise<number> {
  return replaceSourceChunks(tx, { ...source, type: '' }, []);
}

/**
 * The current tenant's chunks ranked by BM25 over the tenant's own term statistics (Lucene's idf,
 * which is never negative). `score` is BM25 divided by the most any chunk could reach for this
 * query (every term with unbounded frequency: the sum of idf·(k1+1)), so it lies in 0..1.
 */
export async function fulltextSearch(
  tx: Tx,
  input: { query: string; limit: number; minScore?: number; filters: ChunkFilters; bm25: Bm25Parameters },
): Promise<ScoredChunk[]> {
  const { k1, b } = input.bm25;
  const { kinds, types, sourceIds } = input.filters;
  return tx<ScoredChunk[]>`
    with q as (
      select distinct t.lexeme as term from unnest(to_tsvector('english', ${input.query})) as t
    ),
    totals as (
      select coalesce(sum(chunk_count), 0)::float8 as n, coalesce(sum(term_total), 0)::float8 as total
        from search_tenant_stats where tenant_id = current_tenant_id()
    ),
    df as (
      select s.term, sum(s.chunk_frequency)::float8 as df
        from search_term_stats s
       where s.tenant_id = current_tenant_id() and s.term in (select term from q)
       group by s.term
      having sum(s.chunk_frequency) > 0
    ),
    idf as (
      select df.term, ln(1 + (totals.n - df.df + 0.5) / (df.df + 0.5)) as idf from df, totals
    ),
    bound as (
      select sum(idf.idf) * (${k1}::float8 + 1) as best, (select greatest(total / nullif(n, 0), 1) from totals) as avgdl from idf
    ),
    scored as (
      select p.chunk_id,
             sum(idf.idf * p.frequency * (${k1}::float8 + 1)
                 / (p.frequency + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * p.chunk_terms / bound.avgdl))) as bm25
        from idf
        join search_postings p on p.tenant_id = current_tenant_id() and p.term = idf.term
        cross join bound
       group by p.chunk_id
    )
    select ${tx.unsafe(HIT_COLUMNS)}, least(scored.bm25 / bound.best, 1)::float8 as score
      from scored
      join search_chunks c on c.id = scored.chunk_id
     cross join bound
     where (${kinds ?? null}::text[] is null or c.source_kind = any (${kinds ?? null}::text[]))
       and (${types ?? null}::text[] is null or c.source_type = any (${types ?? null}::text[]))
       and (${sourceIds ?? null}::text[] is null or c.source_id = any (${sourceIds ?? null}::text[]))
       and scored.bm25 / bound.best >= ${input.minScore ?? 0}
     order by scored.bm25 desc, c.id
     limit ${input.limit}`;
}
