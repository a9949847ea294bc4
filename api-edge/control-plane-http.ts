import { createTRPCUntypedClient, httpLink, httpSubscriptionLink, splitLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import {
  CONTROL_PLANE_TOKEN_HEADER,
  detachedByteStream,
  encodeUploadMeta,
  unstorableInputError,
  UPLOAD_META_HEADER,
  type CallContext,
  type ControlPlane,
  type UploadBody,
} from '../control-plane/contracts.ts';
import { FetchEventSource } from './fetch-event-source.ts';

/**
 * The edge's credential, and the caller's token, tenant, request id and trace as headers (the
 * tenant percent-encoded: it comes from a path or header of the request and may hold any text; the
 * request id is printable ASCII, checked by the edge).
 */
function callHeaders(credential: string, call: CallContext): Record<string, string> {
  const headers: Record<string, string> = { [CONTROL_PLANE_TOKEN_HEADER]: credential };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (call.tenantHint) headers['x-tenant-id'] = encodeURIComponent(call.tenantHint);
  if (call.requestId) headers['x-request-id'] = call.requestId;
  if (call.traceparent) headers.traceparent = call.traceparent;
  return headers;
}

/**
 * The edge's default bound on one call to the control plane: the longest wait a procedure makes on
 * purpose (a document's index job, 25 s) with a database statement's margin. A call whose answer
 * has not begun by then is a 503 with `Retry-After`, not a request that hangs.
 */
export const DEFAULT_CONTROL_PLANE_TIMEOUT_MS = 40_000;

/** A call the control plane did not begin to answer within the edge's bound (`ETIMEDOUT`: api-edge/errors.ts reads it as unreachable). */
class ControlPlaneTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * A clock of the time a call spends waiting on the control plane, which aborts `controller` once
 * that reaches `timeoutMs`. It runs from the start, is paused while the edge waits on its own
 * client (an upload's next bytes) and stopped once the control plane's answer begins.
 */
function waitClock(timeoutMs: number, controller: AbortController) {
  let left = timeoutMs;
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  const clock = {
    run() {
      if (timer || controller.signal.aborted) return;
      since = Date.now();
      timer = setTimeout(() => controller.abort(new ControlPlaneTimeout(`the control plane did not answer within ${timeoutMs} ms`)), left);
    },
    pause() {
      if (!timer) return;
      clearTimeout(timer);
      timer = undefined;
      left = Math.max(0, left - (Date.now() - since));
    },
    stop: () => clock.pause(),
  };
  clock.run();
  return clock;
}

/**
 * `fetch` bounded by `timeoutMs` until the response's head arrives (its body, an event stream
 * say, is not bounded). A request body is a stream the clock pauses on while the edge waits for
 * the next bytes from its own client, so a slow upload is not cut. Past the bound it rejects with
 * {@link ControlPlaneTimeout}.
 */
function headWithin(timeoutMs: number, send: typeof fetch = fetch) {
  return async (url: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const timeout = new AbortController();
    const clock = waitClock(timeoutMs, timeout);
    const body = init.body instanceof ReadableStream ? pausedWhileReading(init.body as ReadableStream<Uint8Array>, clock) : init.body;
    try {
      return await send(url, { ...init, body, signal: init.signal ? AbortSignal.any([init.signal, timeout.signal]) : timeout.signal });
    } catch (error) {
      throw timeout.signal.aborted ? timeout.signal.reason : error;
    } finally {
      clock.stop();
    }
  };
}

/** `source`, with `clock` paused while each chunk is read from it. */
function pausedWhileReading(source: ReadableStream<Uint8Array>, clock: ReturnType<typeof waitClock>): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        clock.pause();
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } finally {
          clock.run();
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

const callOf = (op: { context: Record<string, unknown> }) => op.context as unknown as CallContext;

/**
 * A subscription ends at its first error. tRPC's SSE link would otherwise reconnect on the codes it
 * deems retryable, which include INTERNAL_SERVER_ERROR, the code every domain error travels with.
 */
const endOnError: TRPCLink<AnyRouter> =
  () =>
  ({ op, next }) =>
    observable((observer) => {
      const subscription = next(op).subscribe({
        next(envelope) {
          const result = envelope.result as { type?: string; state?: string; error?: TRPCClientError<AnyRouter> | null };
          if (result.type === 'state' && result.state === 'connecting' && result.error) observer.error(result.error);
          else observer.next(envelope);
        },
        error: (error) => observer.error(error),
        complete: () => observer.complete(),
      });
      return () => subscription.unsubscribe();
    });

/**
 * The control plane over tRPC's HTTP link: the edge's `credential` (`CONTROL_PLANE_TOKEN`), which
 * the control plane requires of every call, and the caller's token and tenant travel as headers.
 * Queries are sent as POST too, so that a query's input (a long filter list) is not limited by the
 * length of a URL. Subscriptions go over server-sent events (tRPC's `httpSubscriptionLink`, with an
 * EventSource that sends the same headers). An upload is the request's body, sent as tRPC sends a
 * binary input (application/octet-stream) but streamed, with its `meta` in the `x-upload-meta` header.
 * Every call waits at most `timeoutMs` for the control plane's answer to begin (an upload's clock
 * stopped while its client sends), and then fails as an unreachable control plane does: a 503
 * with `Retry-After` (docs/decisions/0186-bounded-control-plane-calls-and-one-drain-deadline.md).
 */
export function createHttpControlPlane(url: string, credential: string, options: { timeoutMs?: number } = {}): ControlPlane {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONTROL_PLANE_TIMEOUT_MS;
  const fetchHead = headWithin(timeoutMs);
  const headersOf = (call: CallContext) => callHeaders(credential, call);
  const client = createTRPCUntypedClient({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: [
          endOnError,
          httpSubscriptionLink({
            url,
            EventSource: FetchEventSource,
            eventSourceOptions: ({ op }) => ({ headers: headersOf(callOf(op)), headTimeoutMs: timeoutMs }),
          }),
        ],
        false: httpLink({ url, methodOverride: 'POST', headers: ({ op }) => headersOf(callOf(op)), fetch: fetchHead }),
      }),
    ],
  });
  const context = (call: CallContext) => ({ context: call as unknown as Record<string, unknown> });
  // The control plane refuses such input too; here it is refused before JSON.stringify would fail
  // on a document too deep to serialise, with the same 400 the control plane gives in-process.
  const send = (input: unknown) => {
    const error = unstorableInputError(input);
    if (error) throw error;
    return input;
  };
  const base = url.replace(/\/+$/, '');
  return {
    query: async (call, domain, procedure, input) => client.query(`${domain}.${procedure}`, send(input), context(call)),
    mutation: async (call, domain, procedure, input) => client.mutation(`${domain}.${procedure}`, send(input), context(call)),
    subscription: (call: CallContext, domain: string, procedure: string, input: unknown, options: { signal?: AbortSignal } = {}) =>
      ({
        [Symbol.asyncIterator]: () => {
          const values = client.subscription(`${domain}.${procedure}`, send(input), { ...context(call), signal: options.signal }) as AsyncIterable<unknown>;
          return values[Symbol.asyncIterator]();
        },
      }) as AsyncIterable<unknown>,
    upload: async (call: CallContext, domain: string, procedure: string, body: UploadBody) => {
      const response = await fetchHead(`${base}/${domain}.${procedure}`, {
        method: 'POST',
        headers: { ...headersOf(call), 'content-type': 'application/octet-stream', [UPLOAD_META_HEADER]: encodeUploadMeta(body.meta) },
        body: detachedByteStream(body.stream),
        duplex: 'half',
      });
      const json = (await response.json().catch(() => undefined)) as { result?: { data: unknown }; error?: unknown } | undefined;
      if (json?.result) return json.result.data;
      throw TRPCClientError.from(json?.error ? (json as never) : new Error(`the control plane answered ${response.status} without a tRPC body`));
    },
  } as ControlPlane;
}
