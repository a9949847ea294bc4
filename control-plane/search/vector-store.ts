import type { Tx } from '../db/client.ts';
import type { ChunkFilters } from './search.repo.ts';
import type { SourceRef } from './search.schema.ts';

/** One chunk's vector with what a store filters on. */
export interface ChunkVector {
  chunkId: string;
  kind: string;
  sourceId: string;
  sourceType: string;
  vector: number[];
}

export interface NearestQuery {
  vector: number[];
  /** Only vectors of this model (and of the query vector's dimension) are compared. */
  model: string;
  limit: number;
  filters: ChunkFilters;
}

/** A chunk near the query, with its cosine similarity (-1..1). */
export interface Neighbour {
  chunkId: string;
  similarity: number;
}

/**
 * Where chunk vectors live and are searched. Every call names the tenant and is confined to it:
 * pgvector through row-level security of the tenant transaction `tx`, Qdrant through a tenant
 * filter on every request. `save` also records the vectors' model and dimension on the chunks'
 * rows in `tx`, so that a chunk counts as embedded exactly when its transaction commits.
 */
export interface VectorStore {
  readonly name: 'pgvector' | 'qdrant';
  /** Whether the store can be used; false (said once in the log) leaves the platform with full-text search only. */
  available(): Promise<boolean>;
  /**
   * Makes what vectors of `model` and `dimensions` need (pgvector: its HNSW index; Qdrant: its
   * collection). Called before the transaction that saves or searches them, never inside one:
   * building an index waits for open writing transactions.
   */
  prepare(model: string, dimensions: number): Promise<void>;
  save(tx: Tx, tenantId: string, model: string, vectors: ChunkVector[]): Promise<void>;
  /** Drops the vectors of `source` other than those of `keepChunkIds`, after the chunks went (Qdrant; pgvector's go with their rows). */
  forgetSource(tenantId: string, source: SourceRef, keepChunkIds: string[]): Promise<void>;
  nearest(tx: Tx, tenantId: string, query: NearestQuery): Promise<Neighbour[]>;
  /** The similarity of each of `chunkIds` (of the tenant, with a vector of the query's model) to the query vector. */
  similarities(tx: Tx, tenantId: string, query: Omit<NearestQuery, 'limit' | 'filters'>, chunkIds: string[]): Promise<Neighbour[]>;
}

/** Cosine similarity of two vectors of one length. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Marks chunks of the current tenant that have no vector yet as embedded by `model` (the vector
 * itself kept elsewhere when `keepVectors` is false). A chunk another process embedded first keeps
 * its vector: every process embeds the backlog, and two may take the same chunk.
 */
export async function markEmbedded(tx: Tx, model: string, vectors: ChunkVector[], keepVectors: boolean): Promise<void> {
  if (vectors.length === 0) return;
  const rows = vectors.map((v) => ({ id: v.chunkId, dimensions: v.vector.length, embedding: keepVectors ? `{${v.vector.join(',')}}` : null }));
  await tx`
    update search_chunks c
       set embedding = v.embedding::real[], embedding_model = ${model}, embedding_dimensions = v.dimensions
      from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as v (id bigint, dimensions integer, embedding text)
     where c.id = v.id and c.tenant_id = current_tenant_id() and c.embedding_model is null`;
}
