import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncListener } from './async-listener.ts';

/**
 * A local HTTP server speaking the OpenAI embeddings wire format (`POST /v1/embeddings` with
 * `{model, input: [...], encoding_format: "float"}`, answered `{object: "list", data: [{object:
 * "embedding", index, embedding}], model, usage}`; errors as `{error: {message, type}}`), standing
 * in for an embedding model no test can reach. Each text gets a deterministic vector of
 * `dimensions` numbers. Like a model with a context limit, it refuses a whole request (400,
 * `invalid_request_error`) when any input contains `refuse`, naming that input's position. Every
 * request's inputs are recorded, in the order they arrived.
 */
export async function startEmbeddingsEndpoint(options: { dimensions?: number } = {}) {
  const dimensions = options.dimensions ?? 8;
  const received: string[][] = [];
  const vectorOf = (text: string) => Array.from({ length: dimensions }, (_, i) => ((text.charCodeAt(i % Math.max(text.length, 1)) || 1) % 17) + i + 1);

  const server = createServer(asyncListener(async (req, res) => {
    let text = '';
    for await (const piece of req) text += piece;
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || !req.url?.endsWith('/v1/embeddings')) return send(404, { error: { message: 'no such route', type: 'invalid_request_error' } });
    const body = JSON.parse(text) as { model: string; input: string[] };
    received.push(body.input);
    const refused = body.input.findIndex((input) => input.includes('refuse'));
    if (refused >= 0) {
      return send(400, { error: { message: `input[${refused}] is longer than the model's maximum context length`, type: 'invalid_request_error' } });
    }
    send(200, { object: 'list', data: body.input.map((input, index) => ({ object: 'embedding', index, embedding: vectorOf(input) })), model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
  }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** The inputs of each request received, oldest first. */
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
