import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ServiceUnavailableError } from '../control-plane/contracts.ts';

/** What a `FetchEventSource` is created with: unlike the standard EventSource, it sends headers. */
export interface FetchEventSourceInit {
  headers?: Record<string, string>;
  withCredentials?: boolean;
  /** How long the response's head may take; past it the source fails with a SERVICE_UNAVAILABLE error (the stream itself is not bounded). */
  headTimeoutMs?: number;
}

/** tRPC's serialized error of a server that did not begin to answer in time: the control plane's error shape, as api-edge/errors.ts reads it. */
const unansweredError = (timeoutMs: number) => {
  const appError = new ServiceUnavailableError(`the control plane did not answer within ${timeoutMs} ms: retry shortly`).toBody();
  return JSON.stringify({ code: -32603, message: appError.message, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 503, appError } });
};

/**
 * An EventSource over fetch, for tRPC's `httpSubscriptionLink`: Node 20 has no EventSource, and
 * the standard one cannot send the bearer token the control plane verifies. It does not reconnect:
 * a failed or ended stream is an `error` in state CLOSED, which ends the subscription (the edge's
 * own client reconnects if it wants to). A JSON error answer instead of a stream (a request the
 * server refused before streaming) is handed on as tRPC's `serialized-error` event, so the caller
 * gets the server's error. A head that does not come within `headTimeoutMs` is such an error too:
 * SERVICE_UNAVAILABLE.
 */
export class FetchEventSource extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSED = 2;
  readyState = 0;
  readonly withCredentials = false;
  readonly #abort = new AbortController();

  constructor(
    readonly url: string,
    init: FetchEventSourceInit = {},
  ) {
    super();
    void this.#run(init.headers ?? {}, init.headTimeoutMs);
  }

  close(): void {
    this.readyState = this.CLOSED;
    this.#abort.abort();
  }

  async #run(headers: Record<string, string>, headTimeoutMs: number | undefined): Promise<void> {
    let late = false;
    const timer = headTimeoutMs === undefined ? undefined : setTimeout(() => ((late = true), this.#abort.abort()), headTimeoutMs);
    try {
      const response = await fetch(this.url, { headers: { accept: 'text/event-stream', ...headers }, signal: this.#abort.signal }).finally(() => clearTimeout(timer));
      if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
        const body = (await response.json().catch(() => undefined)) as { error?: unknown } | undefined;
        if (body?.error && this.readyState !== this.CLOSED) this.dispatchEvent(new MessageEvent('serialized-error', { data: JSON.stringify(body.error) }));
        return this.#fail();
      }
      if (this.readyState === this.CLOSED) return void response.body.cancel().catch(() => {});
      this.readyState = this.OPEN;
      this.dispatchEvent(new Event('open'));
      await this.#read(response.body.pipeThrough(new TextDecoderStream()));
    } catch {
      // A closed source's fetch ends with an AbortError; any other failure is reported below.
      if (late && this.readyState !== this.CLOSED) this.dispatchEvent(new MessageEvent('serialized-error', { data: unansweredError(headTimeoutMs!) }));
    }
    this.#fail();
  }

  /** Dispatches each event of the stream, until it ends or the source is closed. */
  async #read(text: ReadableStream<string>): Promise<void> {
    let lastEventId = '';
    for await (const event of text.pipeThrough(new EventSourceParserStream())) {
      if (this.readyState === this.CLOSED) return;
      if (event.id !== undefined) lastEventId = event.id;
      this.dispatchEvent(new MessageEvent(event.event || 'message', { data: event.data, lastEventId }));
    }
  }

  #fail(): void {
    if (this.readyState === this.CLOSED) return;
    this.readyState = this.CLOSED;
    this.dispatchEvent(new Event('error'));
  }
}
