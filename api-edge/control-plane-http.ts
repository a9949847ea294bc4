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
 */
export function createHttpControlPlane(url: string, credential: string): ControlPlane {
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
            eventSourceOptions: ({ op }) => ({ headers: headersOf(callOf(op)) }),
          }),
        ],
        false: httpLink({ url, methodOverride: 'POST', headers: ({ op }) => headersOf(callOf(op)) }),
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
      const response = await fetch(`${base}/${domain}.${procedure}`, {
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
