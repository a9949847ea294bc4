import { inject } from 'vitest';
import { createDb } from '../../control-plane/db/client.ts';
import { createSearchService } from '../../control-plane/search/search.service.ts';

/**
 * Writes chunks into the run's search index as the search service does (full text; vectors come
 * later from a stack's own embedding backlog), for tests of features that retrieve from it.
 */
export async function indexChunks(tenantId: string, source: { kind: 'document' | 'resource'; id: string; type: string }, chunks: Array<{ content: string; metadata?: Record<string, unknown> }>) {
  const db = createDb(inject('databaseUrl'), { max: 1, systemMax: 1, tenantDatabaseUrl: inject('tenantDatabaseUrl') });
  try {
    return await createSearchService({ db, embedder: null, vectors: null }).replaceSource({ tenantId }, source, chunks.map((c) => ({ content: c.content, metadata: c.metadata ?? {} })));
  } finally {
    await db.close();
  }
}
