import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEmbedder, createOpenAiEmbedder, embedderFromEnv, LOCAL_EMBEDDING_MODEL } from './embeddings.ts';
import { asyncListener } from '../../test/harness/async-listener.ts';

interface Received {
  path: string;
  authorization?: string;
  body: { model: string; input: string[]; encoding_format?: string };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

/**
 * The OpenAI embeddings client against a small local server that speaks the documented wire format
 * of `POST /v1/embeddings` (no such model runs here): request `{model, input, encoding_format}`,
 * answer `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`, errors as
 * `{error: {message, type}}`. The server answers each input with a vector derived from its text
 * and returns the items in reverse order, so the client must place them by `index`.
 */
describe('OpenAI-compatible embeddings client', () => {
  let server: Server;
  let origin: string;
  const received: Received[] = [];
  /** Statuses to answer before the next successful one. */
  const failures: { status: number; retryAfter?: string }[] = [];

  const vectorOf = (text: string) => [text.length, text.charCodeAt(0) || 0, 1];

  beforeAll(async () => {
    server = createServer(asyncListener(async (req, res) => {
      const body = (await readJson(req)) as Received['body'];
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || !req.url?.endsWith('/v1/embeddings')) return send(404, { error: { message: 'no such route', type: 'invalid_request_error' } });
      if (body.model === 'missing-model') return send(404, { error: { message: 'The model `missing-model` does not exist', type: 'invalid_request_error' } });
      const failure = failures.shift();
      if (failure) return send(failure.status, { error: { message: 'slow down', type: 'rate_limit' } }, failure.retryAfter ? { 'retry-after': failure.retryAfter } : {});
      const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })).reverse();
      send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
    }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the documented request, with the key and model, and places vectors by index', async () => {
    received.length = 0;
    const embedder = createOpenAiEmbedder({ baseUrl: `${origin}/v1`, apiKey: 'sk-test', model: 'nomic-embed-text' });
    expect(embedder.model).toBe('nomic-embed-text');
    const texts = ['alpha', 'be', 'gamma ray'];
    expect(await embedder.embed(texts)).toEqual(texts.map(vectorOf));
    expect(received).toEqual([{ path: '/v1/embeddings', authorization: 'Bearer sk-test', body: { model: 'nomic-embed-text', input: texts, encoding_format: 'float' } }]);
  });

  it('batches long input lists and keeps their order', async () => {
    received.length = 0;
    const embedder = createOpenAiEmbedder({ baseUrl: origin, batchSize: 2 });
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    expect(await embedder.embed(texts)).toEqual(texts.map(vectorOf));
    expect(received.map((r) => r.body.input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]);
    // A bare origin means /v1/embeddings; no key, no authorization header; the default model.
    expect(received[0]).toMatchObject({ path: '/v1/embeddings', authorization: undefined, body: { model: 'text-embedding-3-small' } });
  });

  it('retries a rate-limited request and then succeeds', async () => {
    received.length = 0;
    failures.push({ status: 429, retryAfter: '0' }, { status: 503 });
    const embedder = createOpenAiEmbedder({ baseUrl: `${origin}/v1`, retryBaseMs: 5 });
    expect(await embedder.embed(['retry me'])).toEqual([vectorOf('retry me')]);
    expect(received).toHaveLength(3);
  });

  it('fails with the endpoint\'s own message on a refusal', async () => {
    const embedder = createOpenAiEmbedder({ baseUrl: `${origin}/v1`, model: 'missing-model' });
    await expect(embedder.embed(['x'])).rejects.toThrow(/answered 404: The model `missing-model` does not exist/);
    // A model that fails is the platform's upstream failing: BAD_GATEWAY (502), as for chat models.
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    const unreachable = createOpenAiEmbedder({ baseUrl: 'http://127.0.0.1:9/v1' });
    await expect(unreachable.embed(['x'])).rejects.toMatchObject({ code: 'BAD_GATEWAY', message: expect.stringMatching(/could not be reached/) });
  });

  it('is chosen by EMBEDDINGS_BASE_URL; the offline model otherwise', () => {
    expect(embedderFromEnv({ EMBEDDINGS_BASE_URL: `${origin}/v1`, EMBEDDINGS_MODEL: 'm1' }).model).toBe('m1');
    expect(embedderFromEnv({}).model).toBe(LOCAL_EMBEDDING_MODEL);
  });
});

describe('the offline embedding model', () => {
  it('runs on a thread of its own, giving 512 numbers per text in order (a text without words too)', async () => {
    const embedder = createLocalEmbedder();
    expect(embedder.model).toBe(LOCAL_EMBEDDING_MODEL);
    const texts = Array.from({ length: 40 }, (_, i) => (i === 7 ? '   ' : `sentence number ${i} about ${i % 2 ? 'cars' : 'cakes'}`));
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(40);
    for (const vector of vectors) expect(vector).toHaveLength(512);
    // The same text gives the same vector, whichever batch it is in.
    expect((await embedder.embed([texts[33]!]))[0]).toEqual(vectors[33]);
    expect(embedder.thread()).toBeGreaterThan(0);
    expect(embedder.thread()).not.toBe(threadId);
  }, 60_000);
});
