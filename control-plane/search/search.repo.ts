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

/** A chunk still without a vector, as the embedding backlog reads it (any tenant). */
export interface PendingChunk {
  chunkId: string;
  tenantId: string;
  kind: SourceKind;
  sourceId: string;
  sourceType: string;
  content: string;
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

/** The stored projection (its one chunk) of each of the current tenant's resources `ids` that has one. */
export async function resourceProjections(tx: Tx, ids: readonly string[]): Promise<Map<string, { content: string; metadata: Record<string, unknown> }>> {
  const rows = await tx<{ id: string; content: string; metadata: Record<string, unknown> }[]>`
    select source_id as id, content, metadata from search_chunks
     where tenant_id = current_tenant_id() and source_kind = 'resource' and source_id = any(${ids as string[]}::text[]) and chunk_index = 0`;
  return new Map(rows.map((row) => [row.id, { content: row.content, metadata: row.metadata }]));
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
  input: { query: string; limit: number; minScore?: number; filters: ChunkFilters; bm25: Bm25Parameters; chunkIds?: string[] },
): Promise<ScoredChunk[]> {
  const { k1, b } = input.bm25;
  const chunkIds = input.chunkIds ?? null;
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
       where ${chunkIds}::bigint[] is null or p.chunk_id = any (${chunkIds}::bigint[])
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

/** The ids of a source's chunks in the current tenant, in chunk order. */
export async function sourceChunkIds(tx: Tx, source: SourceRef): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select id::text as id from search_chunks
     where tenant_id = current_tenant_id() and source_kind = ${source.kind} and source_id = ${source.id}
     order by chunk_index`;
  return rows.map((r) => r.id);
}

/** The current tenant's chunks of `ids` (those that still exist), with score 0. */
export function chunksByIds(tx: Tx, ids: string[]): Promise<ScoredChunk[]> {
  return tx<ScoredChunk[]>`
    select ${tx.unsafe(HIT_COLUMNS)}, 0::float8 as score from search_chunks c
     where c.id = any (${ids}::bigint[]) and c.tenant_id = current_tenant_id()`;
}

/** Whether a chunk is the backlog's to embed: no vector, not refused by the model, and not claimed by a process now. */
const CLAIMABLE = `embedding_model is null and embedding_refused is null and (embedding_lease_until is null or embedding_lease_until < now())`;

/** Platform work (the owner's transaction): the first tenant after `after` (in id order) with chunks the backlog can claim. */
export async function nextBacklogTenant(tx: Tx, after: string | null): Promise<string | undefined> {
  const rows = await tx.unsafe<{ tenantId: string }[]>(
    `select tenant_id::text as "tenantId" from search_chunks
      where ${CLAIMABLE} and ($1::uuid is null or tenant_id > $1::uuid) order by tenant_id limit 1`,
    [after],
  );
  return rows[0]?.tenantId;
}

/**
 * Claims up to `limit` of the current tenant's oldest chunks without a vector for `leaseMs`,
 * skipping those another transaction is claiming: no other process embeds them meanwhile.
 */
export function claimBacklogChunks(tx: Tx, limit: number, leaseMs: number): Promise<PendingChunk[]> {
  return tx.unsafe<PendingChunk[]>(
    `with claimed as (
       select id from search_chunks where tenant_id = current_tenant_id() and ${CLAIMABLE} order by id limit $1::int for update skip locked)
     update search_chunks c set embedding_lease_until = now() + $2::int * interval '1 ms' from claimed where c.id = claimed.id
     returning c.id::text as "chunkId", c.tenant_id::text as "tenantId", c.source_kind as kind, c.source_id as "sourceId", c.source_type as "sourceType", c.content`,
    [limit, leaseMs] as never[],
  );
}

/** Platform work: how many milliseconds until the first claim on chunks still to embed ends; undefined when no process holds one. */
export async function nextBacklogLeaseEnd(tx: Tx): Promise<number | undefined> {
  const [row] = await tx<[{ ms: number | null }]>`
    select ceil(extract(epoch from min(embedding_lease_until) - now()) * 1000)::int as ms
      from search_chunks where embedding_model is null and embedding_refused is null and embedding_lease_until > now()`;
  return row.ms ?? undefined;
}

/** Gives claimed chunks back (their embedding failed for a reason of the model's, not theirs). */
export async function releaseChunks(tx: Tx, chunkIds: string[]): Promise<void> {
  await tx.unsafe(`update search_chunks set embedding_lease_until = null where id = any($1::bigint[])`, [chunkIds] as never[]);
}

/** Parks a chunk the embedding model refused, with its answer: the backlog leaves it until its source is written again. */
export async function refuseChunk(tx: Tx, chunkId: string, reason: string): Promise<void> {
  await tx.unsafe(`update search_chunks set embedding_refused = $2, embedding_lease_until = null where id = $1::bigint`, [chunkId, reason.slice(0, 1000)]);
}

/** The current tenant's chunks the embedding model refused (parked by the backlog), with the newest one's source and reason. */
export async function refusedChunks(tx: Tx): Promise<RefusedChunks> {
  const [row] = await tx<[RefusedChunks]>`
    select count(*)::int as count, (array_agg(source_kind || ' ' || source_id order by id desc))[1] as source,
           (array_agg(embedding_refused order by id desc))[1] as reason
      from search_chunks where tenant_id = current_tenant_id() and embedding_refused is not null`;
  return row;
}

/** How many of a tenant's chunks the embedding model refused, and the newest one's source and the model's answer. */
export interface RefusedChunks {
  count: number;
  source: string | null;
  reason: string | null;
}
