import { isDeepStrictEqual } from 'node:util';
import type { Db, Tx } from '../db/client.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import type { Embedder } from './embeddings.ts';
import { projectResource } from './resource-projection.ts';
import { checkedChunks, parseOrThrow } from './search-input.ts';
import { removeSourceChunks, replaceSourceChunks, resourceProjections, sourceChunkIds } from './search.repo.ts';
import { SourceRefSchema, SourceSchema, type ChunkInput, type SearchTenant, type Source, type SourceRef } from './search.schema.ts';
import type { VectorStore } from './vector-store.ts';

/**
 * What goes into a tenant's search index: the chunks of a source (a document, a resource's
 * projection), replaced whole or removed, with their vectors when a vector store is usable, else
 * left to the embedding backlog (`kickBacklog`).
 */
export function createSearchSources(deps: {
  db: Db;
  embedder: Embedder | undefined;
  /** The configured vector store (usable or not): chunks written without vectors wake the backlog only with one. */
  vectors?: VectorStore | null;
  /** The vector store, when there is one and it can be used. */
  vectorStore: () => Promise<VectorStore | undefined>;
  kickBacklog: () => void;
  log: (message: string, detail?: unknown) => void;
}) {
  const { db, embedder, vectorStore, kickBacklog, log } = deps;

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
      /**
       * Brings the projections of `resources` (of `objectType`, in the tenant of `tx`) to the
       * type's `searchFields`, writing only those whose stored projection differs, so that a
       * projection already current keeps its chunk and vector; answers how many it wrote.
       */
      async refreshed(tx: Tx, objectType: ObjectType, resources: readonly { id: string; data: Record<string, unknown> }[]): Promise<number> {
        const stored = await resourceProjections(tx, resources.map((r) => r.id));
        let written = 0;
        for (const resource of resources) {
          const { content, fields } = projectResource(resource.data, objectType.searchFields);
          const wanted = content ? checkedChunks([{ content, metadata: { fields } }])[0] : undefined;
          const current = stored.get(resource.id);
          if (wanted && current ? isDeepStrictEqual(wanted, current) : !wanted && !current) continue;
          const source = { kind: 'resource', id: resource.id, type: objectType.key } as const;
          await replaceSourceIn(tx, source, wanted ? [wanted] : []);
          written++;
        }
        return written;
      },
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

  };
}
