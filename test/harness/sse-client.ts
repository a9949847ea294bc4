import { createParser } from 'eventsource-parser';
import { assertConforms } from './conformance.ts';
import type { TestStack } from './stack.ts';

/** One parsed server-sent event. */
export interface SseMessage {
  id?: string;
  data: string;
}

/**
 * A real SSE client over fetch, parsing with `eventsource-parser`: events, comment lines and
 * the raw text as they arrive. A response that is not an event stream (a refusal) has its JSON
 * in `json`. `close()` cuts the connection, as a client that goes away does.
 */
export interface SseStream {
  status: number;
  headers: Headers;
  /** The body of an answer that is not an event stream. */
  json?: any;
  /** Comment lines seen so far (`: keep-alive`). */
  comments: string[];
  /** Everything received so far. */
  raw: string;
  /** The next event; undefined once the stream has ended (or was closed). */
  next(): Promise<SseMessage | undefined>;
  /** Every remaining event, until the stream ends; then the whole stream is checked against the OpenAPI document. */
  rest(): Promise<SseMessage[]>;
  /** Resolves once a comment line has arrived. */
  comment(): Promise<string>;
  close(): void;
}

export async function openSse(
  stack: TestStack,
  method: string,
  path: string,
  options: { as: string; body?: unknown; headers?: Record<string, string>; conformance?: boolean },
): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(stack.url + path, {
    method,
    headers: {
      authorization: `Bearer ${await stack.token(options.as)}`,
      accept: 'text/event-stream',
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    signal: controller.signal,
  });
  const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const stream: SseStream = {
    status: response.status,
    headers: response.headers,
    comments: [],
    raw: '',
    next: async () => undefined,
    rest: async () => [],
    comment: () => new Promise(() => {}),
    close: () => controller.abort(),
  };
  if (!isStream) {
    const text = await response.text();
    stream.json = text ? JSON.parse(text) : undefined;
    if (options.conformance !== false) assertConforms({ method, path, status: response.status, headers: response.headers, body: stream.json });
    return stream;
  }

  const queue: SseMessage[] = [];
  const commentWaiters: Array<(comment: string) => void> = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const parser = createParser({
    onEvent: (event) => queue.push({ id: event.id, data: event.data }),
    onComment: (comment) => {
      stream.comments.push(comment);
      for (const resolve of commentWaiters.splice(0)) resolve(comment);
    },
  });
  const done = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        stream.raw += text;
        parser.feed(text);
        wake?.();
      }
    } catch {
      // cut by close()
    }
    ended = true;
    wake?.();
    if (options.conformance !== false && !controller.signal.aborted) {
      assertConforms({ method, path, status: response.status, headers: response.headers, body: stream.raw });
    }
  })();
  done.catch(() => {});

  stream.next = async () => {
    for (;;) {
      if (queue.length) return queue.shift();
      if (ended) return undefined;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  stream.rest = async () => {
    const events: SseMessage[] = [];
    for (let event = await stream.next(); event; event = await stream.next()) events.push(event);
    await done;
    return events;
  };
  stream.comment = () => new Promise((resolve) => commentWaiters.push(resolve));
  return stream;
}

/** The chat event of an SSE message (`{type, data}`). */
export const chatEvent = (message: SseMessage) => JSON.parse(message.data) as { type: string; data: any };
