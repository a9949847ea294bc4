import { createHash } from 'node:crypto';
import type { Db, Tx } from '../db/client.ts';
import { markEmbedded, type ChunkVector, type NearestQuery, type Neighbour, type VectorStore } from './vector-store.ts';

/** Candidates the HNSW search keeps per query: higher finds more of the true neighbours, slower. */
const EF_SEARCH = 100;

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** pgvector's type for a dimension: HNSW indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000; beyond, the scan is exact. */
function vectorType(dimensions: number): { type: 'vector' | 'halfvec'; indexed: boolean } {
  if (dimensions <= 2000) return { type: 'vector', indexed: true };
  return dimensions <= 4000 ? { type: 'halfvec', indexed: true } : { type: 'vector', indexed: false };
}

/**
 * Vectors in PostgreSQL: each chunk's row holds its vector (`real[]`, with model and dimension),
 * and pgvector searches them through an HNSW index per model and dimension, an expression index
 * over the cast to `vector(n)` and partial on that model, made on first use. Queries run in the
 * tenant's transaction, so row-level security confines them; the iterative index scan of pgvector
 * 0.8 keeps scanning until enough of the tenant's rows are found. The extension is the database
 * administrator's to create (the local setup does); without it the store is unavailable.
 */
export function createPgvectorStore(deps: { db: Db; log?: (message: string) => void }): VectorStore {
  const { db } = deps;
  let version: Promise<string | undefined> | undefined;
  const indexes = new Map<string, Promise<void>>();

  const extensionVersion = () =>
    (version ??= (async () => {
      const find = async () => (await db.sql<{ v: string }[]>`select extversion as v from pg_extension where extname = 'vector'`)[0]?.v;
      const found = await find();
      if (found) return found;
      // Allowed to the cluster's superuser only (the local setup's login): elsewhere the administrator creates it.
      await db.sql`create extension if not exists vector`.catch(() => undefined);
      const created = await find();
      if (!created) deps.log?.('the pgvector extension is not installed in this database: vector search is off (full-text search works)');
      return created;
    })());

  const iterativeScan = async () => {
    const [major = 0, minor = 0] = ((await extensionVersion()) ?? '0.0').split('.').map(Number);
    return major > 0 || minor >= 8;
  };

  /** The HNSW index of one model and dimension, made once (concurrent makers wait on one advisory lock). */
  function ensureIndex(model: string, dimensions: number): Promise<void> {
    const key = `${model}\u0000${dimensions}`;
    let made = indexes.get(key);
    if (!made) {
      const { type, indexed } = vectorType(dimensions);
      const name = `search_chunks_hnsw_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
      made = indexed
        ? db.system(async (tx) => {
            await tx`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`;
            await tx.unsafe(
              `create index if not exists ${name} on search_chunks using hnsw ((embedding::${type}(${dimensions})) ${type}_cosine_ops)
                 where embedding_model = ${literal(model)} and embedding_dimensions = ${dimensions}`,
            );
          })
        : Promise.resolve();
      made.catch(() => indexes.delete(key));
      indexes.set(key, made);
    }
    return made;
  }

  return {
    name: 'pgvector',
    available: async () => !!(await extensionVersion()),

    prepare: ensureIndex,

    async save(tx: Tx, _tenantId: string, model: string, vectors: ChunkVector[]) {
      await markEmbedded(tx, model, vectors, true);
    },

    forgetSource: async () => {},

    async nearest(tx: Tx, _tenantId: string, query: NearestQuery): Promise<Neighbour[]> {
      const dimensions = query.vector.length;
      const { type } = vectorType(dimensions);
      const cast = `${type}(${dimensions})`;
      await tx.unsafe(`set local hnsw.ef_search = ${Math.max(EF_SEARCH, query.limit)}`);
      if (await iterativeScan()) await tx.unsafe(`set local hnsw.iterative_scan = relaxed_order`);
      const { kinds, types, sourceIds } = query.filters;
      // Model and dimension as literals, so that the planner can match the partial index.
      const rows = await tx.unsafe<{ chunkId: string; distance: number }[]>(
        `select c.id::text as "chunkId", (c.embedding::${cast}) <=> $1::${cast} as distance
           from search_chunks c
          where c.tenant_id = current_tenant_id()
            and c.embedding_model = ${literal(query.model)} and c.embedding_dimensions = ${dimensions}
            and ($2::text[] is null or c.source_kind = any ($2::text[]))
            and ($3::text[] is null or c.source_type = any ($3::text[]))
            and ($4::text[] is null or c.source_id = any ($4::text[]))
          order by (c.embedding::${cast}) <=> $1::${cast}
          limit $5`,
        [`[${query.vector.join(',')}]`, kinds ?? null, types ?? null, sourceIds ?? null, query.limit] as never[],
      );
      // The iterative scan returns rows nearly, not strictly, in order.
      return rows.map((r) => ({ chunkId: r.chunkId, similarity: 1 - Number(r.distance) })).sort((a, b) => b.similarity - a.similarity);
    },

    async similarities(tx: Tx, _tenantId: string, query, chunkIds: string[]): Promise<Neighbour[]> {
      if (chunkIds.length === 0) return [];
      const dimensions = query.vector.length;
      const cast = `${vectorType(dimensions).type}(${dimensions})`;
      const rows = await tx.unsafe<{ chunkId: string; distance: number }[]>(
        `select c.id::text as "chunkId", (c.embedding::${cast}) <=> $1::${cast} as distance
           from search_chunks c
          where c.id = any ($2::bigint[]) and c.tenant_id = current_tenant_id()
            and c.embedding_model = ${literal(query.model)} and c.embedding_dimensions = ${dimensions}`,
        [`[${query.vector.join(',')}]`, chunkIds] as never[],
      );
      return rows.map((r) => ({ chunkId: r.chunkId, similarity: 1 - Number(r.distance) }));
    },
  };
}
