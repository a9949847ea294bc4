import { QdrantClient } from '@qdrant/js-client-rest';
import type { Tx } from '../db/client.ts';
import type { ChunkFilters } from './search.repo.ts';
import type { SourceRef } from './search.schema.ts';
import { markEmbedded, type ChunkVector, type NearestQuery, type Neighbour, type VectorStore } from './vector-store.ts';

export interface QdrantStoreOptions {
  url: string;
  apiKey?: string;
  /** Collections are named `<prefix>_<model>_<dimension>`. Default `svc_chunks`. */
  collectionPrefix?: string;
  log?: (message: string) => void;
  /** Only for tests: skip the client's server version check. */
  checkCompatibility?: boolean;
}

type Condition = Record<string, unknown>;

/** The filter every request carries: the tenant's points only, then the caller's filters. */
function tenantFilter(tenantId: string, filters: ChunkFilters = {}, extra: Condition[] = []) {
  const must: Condition[] = [{ key: 'tenant_id', match: { value: tenantId } }, ...extra];
  if (filters.kinds) must.push({ key: 'kind', match: { any: filters.kinds } });
  if (filters.types) must.push({ key: 'source_type', match: { any: filters.types } });
  if (filters.sourceIds) must.push({ key: 'source_id', match: { any: filters.sourceIds } });
  return { must };
}

function isNotFound(error: unknown): boolean {
  return (error as { status?: number } | null)?.status === 404;
}

/**
 * Vectors in Qdrant (`QDRANT_URL`), through `@qdrant/js-client-rest`: one collection per model and
 * dimension (cosine distance), made on first use with a tenant index on `tenant_id`; points are
 * keyed by chunk id and carry tenant, kind, source id and type as payload. Every search and
 * delete filters on the tenant. A point whose chunk is gone (replaced, or its transaction rolled
 * back) matches no chunk row and is never returned; `forgetSource` removes such points.
 */
export function createQdrantStore(options: QdrantStoreOptions): VectorStore {
  const client = new QdrantClient({ url: options.url, apiKey: options.apiKey, checkCompatibility: options.checkCompatibility ?? true });
  const prefix = options.collectionPrefix ?? 'svc_chunks';
  const collections = new Map<string, Promise<void>>();
  /** Collections this process wrote or found, by model: where a source's points may be. */
  const modelCollections = new Set<string>();

  const collectionName = (model: string, dimensions: number) => `${prefix}_${model.toLowerCase().replace(/[^a-z0-9]+/g, '-')}_${dimensions}`;

  function ensureCollection(name: string, dimensions: number): Promise<void> {
    let ready = collections.get(name);
    if (!ready) {
      ready = (async () => {
        const { exists } = await client.collectionExists(name);
        if (!exists) {
          await client.createCollection(name, { vectors: { size: dimensions, distance: 'Cosine' } }).catch(async (error: unknown) => {
            // Another process made it meanwhile.
            if (!(await client.collectionExists(name)).exists) throw error;
          });
          await client.createPayloadIndex(name, { field_name: 'tenant_id', field_schema: { type: 'keyword', is_tenant: true }, wait: true });
        }
        modelCollections.add(name);
      })();
      ready.catch(() => collections.delete(name));
      collections.set(name, ready);
    }
    return ready;
  }

  let reachable: Promise<boolean> | undefined;
  let listed: Promise<void> | undefined;
  /** Adds the collections made by earlier processes (once), so that forgetting reaches their points too. */
  const listCollections = () =>
    (listed ??= client.getCollections().then(({ collections: found }) => {
      for (const c of found) if (c.name.startsWith(`${prefix}_`)) modelCollections.add(c.name);
    }));

  return {
    name: 'qdrant',

    available: () =>
      (reachable ??= client.getCollections().then(
        () => true,
        (error: unknown) => {
          reachable = undefined;
          options.log?.(`Qdrant at ${options.url} cannot be reached (${(error as Error).message}): vector search is off until it can`);
          return false;
        },
      )),

    prepare: (model: string, dimensions: number) => ensureCollection(collectionName(model, dimensions), dimensions),

    async save(tx: Tx, tenantId: string, model: string, vectors: ChunkVector[]) {
      if (vectors.length === 0) return;
      const byDimension = new Map<number, ChunkVector[]>();
      for (const v of vectors) byDimension.set(v.vector.length, [...(byDimension.get(v.vector.length) ?? []), v]);
      for (const [dimensions, group] of byDimension) {
        const name = collectionName(model, dimensions);
        await ensureCollection(name, dimensions);
        await client.upsert(name, {
          wait: true,
          points: group.map((v) => ({
            id: Number(v.chunkId),
            vector: v.vector,
            payload: { tenant_id: tenantId, kind: v.kind, source_id: v.sourceId, source_type: v.sourceType },
          })),
        });
      }
      await markEmbedded(tx, model, vectors, false);
    },

    async forgetSource(tenantId: string, source: SourceRef, keepChunkIds: string[]) {
      const keep = keepChunkIds.map(Number);
      await listCollections().catch((error: unknown) => {
        listed = undefined;
        throw error;
      });
      for (const name of modelCollections) {
        await client
          .delete(name, {
            wait: true,
            filter: {
              ...tenantFilter(tenantId, { kinds: [source.kind as never], sourceIds: [source.id] }),
              ...(keep.length ? { must_not: [{ has_id: keep }] } : {}),
            },
          })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          });
      }
    },

    async nearest(_tx: Tx, tenantId: string, query: NearestQuery): Promise<Neighbour[]> {
      const name = collectionName(query.model, query.vector.length);
      try {
        const { points } = await client.query(name, { query: query.vector, limit: query.limit, filter: tenantFilter(tenantId, query.filters), with_payload: false });
        modelCollections.add(name);
        return points.map((p) => ({ chunkId: String(p.id), similarity: p.score }));
      } catch (error) {
        if (isNotFound(error)) return [];
        throw error;
      }
    },

    async similarities(_tx: Tx, tenantId: string, query, chunkIds: string[]): Promise<Neighbour[]> {
      if (chunkIds.length === 0) return [];
      const name = collectionName(query.model, query.vector.length);
      try {
        const { points } = await client.query(name, {
          query: query.vector,
          limit: chunkIds.length,
          filter: tenantFilter(tenantId, {}, [{ has_id: chunkIds.map(Number) }]),
          with_payload: false,
        });
        return points.map((p) => ({ chunkId: String(p.id), similarity: p.score }));
      } catch (error) {
        if (isNotFound(error)) return [];
        throw error;
      }
    },
  };
}
