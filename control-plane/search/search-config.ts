import type { Db } from '../db/client.ts';
import { embedderFromEnv, type Embedder } from './embeddings.ts';
import { createPgvectorStore } from './pgvector-store.ts';
import { createQdrantStore } from './qdrant-store.ts';
import type { VectorStore } from './vector-store.ts';

/**
 * The embedder and vector store the environment asks for: an OpenAI-compatible endpoint when
 * `EMBEDDINGS_BASE_URL` is set (`EMBEDDINGS_API_KEY`, `EMBEDDINGS_MODEL`), else the offline model;
 * Qdrant when `QDRANT_URL` is set (`QDRANT_API_KEY`, `QDRANT_COLLECTION_PREFIX`), else pgvector in
 * the platform's database. `SEARCH_VECTORS=off` turns vectors off: full-text search only.
 */
export function searchVectorsFromEnv(db: Db, env: NodeJS.ProcessEnv = process.env, log = (message: string) => console.error(`[search] ${message}`)): { embedder: Embedder | null; vectors: VectorStore | null } {
  if (env.SEARCH_VECTORS === 'off') return { embedder: null, vectors: null };
  const qdrantUrl = env.QDRANT_URL?.trim();
  const vectors = qdrantUrl
    ? createQdrantStore({ url: qdrantUrl, apiKey: env.QDRANT_API_KEY || undefined, collectionPrefix: env.QDRANT_COLLECTION_PREFIX || undefined, log })
    : createPgvectorStore({ db, log });
  return { embedder: embedderFromEnv(env), vectors };
}
