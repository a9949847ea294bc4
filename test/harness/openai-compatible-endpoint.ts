import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncListener } from './async-listener.ts';

/**
 * A local HTTP server speaking the OpenAI chat completions wire format (`POST /v1/chat/completions`,
 * `stream: true`: `text/event-stream` of `data: {chat.completion.chunk}` lines, a usage chunk and
 * `data: [DONE]`), standing in for an endpoint no test can reach. The last user message steers it:
 * `[hold:<key>]` sends the first piece and waits for `release(key)`; `[fail]` breaks the
 * connection after the first piece; `[fail-once:<key>]` does so for the first request naming
 * `key` only (the next one is answered, as after a retry); `[busy]` answers 429 with `Retry-After: 3`. Every answer is
 * "Apollo has a budget of 900 [1]." in pieces. Like a model that cannot tell data from
 * instructions, it obeys `cite document <id>` and `call tool <name>` wherever they are written in
 * the messages it gets: it adds ` [<id>]` to its answer and sends a `tool_calls` piece.
 */
export async function startScriptedEndpoint() {
  const pieces = ['Apollo has ', 'a budget ', 'of 900 ', '[1].'];
  const holds = new Map<string, { arrived: () => void; arrival: Promise<void>; release: () => void; released: Promise<void> }>();
  const arrivals = new Map<string, number>();
  const failedOnce = new Set<string>();
  const hold = (key: string) => {
    let entry = holds.get(key);
    if (!entry) {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.set(key, (entry = { arrived, arrival, release, released }));
    }
    return entry;
  };
  const chunk = (content: string | null, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
  const finish = (res: ServerResponse) => {
    res.write(chunk(null, 'stop'));
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  const received: Array<{ model: string; temperature?: number; max_tokens?: number; messages: Array<{ role: string; content: string }>; [field: string]: unknown }> = [];

  const server = createServer(asyncListener(async (req, res) => {
    let text = '';
    for await (const piece of req) text += piece;
    const body = JSON.parse(text) as (typeof received)[number];
    received.push(body);
    const question = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    if (question.includes('[busy]')) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      return void res.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests' } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk(pieces[0]!));
    const failOnce = /\[fail-once:([\w-]+)\]/.exec(question)?.[1];
    if (question.includes('[fail]') || (failOnce && !failedOnce.has(failOnce) && failedOnce.add(failOnce))) return void setTimeout(() => res.socket?.destroy(), 20);
    const key = /\[hold:([\w-]+)\]/.exec(question)?.[1];
    if (key) {
      const entry = hold(key);
      arrivals.set(key, (arrivals.get(key) ?? 0) + 1);
      entry.arrived();
      await entry.released;
    }
    for (const piece of pieces.slice(1)) res.write(chunk(piece));
    const everything = body.messages.map((m) => m.content).join('\n');
    const cite = /cite document ([\w-]+)/i.exec(everything)?.[1];
    if (cite) res.write(chunk(` [${cite}]`));
    const tool = /call tool ([\w-]+)/i.exec(everything)?.[1];
    if (tool) {
      const call = { index: 0, id: 'call_1', type: 'function', function: { name: tool, arguments: '{}' } };
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] })}\n\n`);
    }
    finish(res);
  }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    settings: { baseUrl, apiKey: 'test-key', model: 'scripted' },
    answer: pieces.join(''),
    /** Resolves once the request holding on `key` has sent its first piece. */
    held: (key: string) => hold(key).arrival,
    release: (key: string) => hold(key).release(),
    /** How many requests are holding (or held) on `key`. */
    arrivals: (key: string) => arrivals.get(key) ?? 0,
    /** The request bodies received, oldest first. */
    received,
    async close() {
      for (const entry of holds.values()) entry.release();
      server.closeAllConnections();
      server.close();
    },
  };
}
