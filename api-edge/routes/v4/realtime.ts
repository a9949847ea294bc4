import { z } from 'zod';
import {
  AlertsSchema,
  EventIdSchema,
  NegotiateInputSchema,
  NegotiationSchema,
  RotatedSigningKeysSchema,
  RotateSigningKeysInputSchema,
  StreamInputSchema,
  UnauthorizedError,
  untrusted,
  type StreamMessage,
} from '../../../control-plane/contracts.ts';
import { toErrorResponse } from '../../errors.ts';
import { openStream, shutdownFailure } from '../../drain.ts';
import { V4_BASE } from '../bases.ts';
import { param, tenantField, tenantQuery } from '../params.ts';
import { bodyAndQueryOptions, jsonObjectBody, optionalObject, queryValue, tenantOption } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/** How long a client waits before it reconnects (the SSE `retry` field), in milliseconds. */
const RECONNECT_MS = 3_000;

const BEARER = /^Bearer\s+(\S+)$/i;

/** One message of a realtime connection as server-sent event text; the event's `id` is what a client resumes after. */
export function sseText(message: StreamMessage): string {
  switch (message.type) {
    case 'ready': {
      const { type: _type, ...ready } = message;
      return `retry: ${RECONNECT_MS}\nid: ${message.lastEventId}\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`;
    }
    case 'event':
      return `id: ${message.event.eventId}\nevent: resource.${message.event.event}\ndata: ${JSON.stringify(message.event)}\n\n`;
    case 'reset': {
      const { type: _type, ...reset } = message;
      return `id: ${message.resumedAt}\nevent: reset\ndata: ${JSON.stringify(reset)}\n\n`;
    }
    case 'heartbeat':
      return ': heartbeat\n\n';
    case 'revoked':
    case 'expired':
      return `event: ${message.type}\ndata: ${JSON.stringify({ reason: message.reason })}\n\n`;
  }
}

/**
 * v4 realtime: a member negotiates a short-lived, one-time token for some channels (`tenant_id` in
 * the body or query string, else the caller's tenant) and opens `GET /v4/realtime/connect?token=...`
 * with it (or `Authorization: Bearer <token>`): server-sent events of the tenant's resource
 * changes, resumed after `Last-Event-ID` (or `?last_event_id=`). Alerts report how delivery goes;
 * platform operators rotate the key that signs the tokens.
 */
export const v4RealtimeRoutes = [
  defineRoute({
    method: 'POST',
    path: '/realtime/negotiate',
    procedure: 'realtime.negotiate',
    tenant: 'query',
    input: { query: tenantQuery, body: { schema: NegotiateInputSchema.extend(tenantField) } },
    output: { 200: { description: 'The token and the URL to connect to', schema: NegotiationSchema.extend({ url: z.string() }) } },
    docs: {
      operationId: 'negotiateRealtime',
      summary: 'Negotiate a realtime connection',
      tag: 'Realtime',
      description: "A signed token for the tenant's resource changes on the channels named (`resources`, `resources:<type>`, `resources:<type>:<id>`), which opens one connection within a minute (a second connection with it is refused: negotiate again to reconnect), and the URL to connect with it. The tenant is `tenant_id` in the body or query string, else the caller's. Needs `resources.read` and the `realtime` capability; the tenant's changes are recorded from its first negotiation on.",
    },
    sample: { body: { channels: ['resources'] } },
    handler: async ({ request, body, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const negotiation = await procedure.mutation(call(tenantId), jsonObjectBody(rest));
      const url = new URL(`${V4_BASE}/realtime/connect`, request.url);
      url.searchParams.set('token', negotiation.token);
      return { ...negotiation, url: url.toString() };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/realtime/connect',
    procedure: 'realtime.stream',
    tenant: 'none',
    input: {
      query: {
        token: param(StreamInputSchema.shape.token, { required: false, description: 'The negotiated token (or send it as a bearer token)' }),
        last_event_id: param(EventIdSchema, { required: false, description: 'Resume after this event (browsers send Last-Event-ID themselves when they reconnect)' }),
      },
      headers: { 'Last-Event-ID': param(EventIdSchema, { required: false, description: 'Resume after this event' }) },
    },
    output: { 200: { description: 'The event stream', eventStream: true } },
    docs: {
      operationId: 'connectRealtime',
      summary: "The tenant's resource changes as server-sent events",
      tag: 'Realtime',
      description: 'Authenticated by the negotiated token (`?token=`, or `Authorization: Bearer <token>`), not by a user token. Events: `ready` at once (its `id` is the newest event before the first one sent), then `resource.created`, `resource.updated`, `resource.deleted` and `resource.action`, each with `id` (the event id) and data `{eventId, event, type, id, version, action?, at}`; `reset` when events to resume after are no longer in the log (the client should reload what it shows); a `: heartbeat` comment every 15 s; `revoked` (data `{reason}`) when the user of the token loses the tenant membership or `resources.read`, or the tenant the `realtime` capability, checked every few seconds; `expired` after an hour. Both end the stream. A token opens one connection: a second one with it is 401; to reconnect, negotiate again and resume. `Last-Event-ID` (or `?last_event_id=`) resumes after that event.',
      security: 'realtimeToken',
    },
    aliases: { last_event_id: 'lastEventId' },
    // Authenticated by a negotiated token that names its tenant, not by the caller: test/e2e/v4-realtime.test.ts covers its isolation.
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const token = queryValue(params, 'token') ?? BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
      if (!token) throw new UnauthorizedError('a realtime token is required: negotiate one (POST /v4/realtime/negotiate), then connect with ?token=');
      const lastEventId = request.headers.get('last-event-id') ?? queryValue(params, 'lastEventId');
      const input = { token: untrusted(token), ...(lastEventId === undefined ? {} : { lastEventId: untrusted(lastEventId) }) };
      const stop = new AbortController();
      request.signal?.addEventListener('abort', () => stop.abort(), { once: true });
      const messages = procedure.subscription(call(), input, { signal: stop.signal })[Symbol.asyncIterator]();
      // A refusal (token, capability, limit) comes before the first message, as a JSON answer.
      const first = await messages.next();
      if (first.done) throw new Error('the realtime connection ended before it was ready');
      const encoder = new TextEncoder();
      let ended = false;
      let forget = () => {};
      const end = (controller: ReadableStreamDefaultController<Uint8Array>, last?: string) => {
        if (ended) return;
        ended = true;
        forget();
        if (last) controller.enqueue(encoder.encode(last));
        controller.close();
      };
      const errorEvent = (error: unknown) => `event: error\ndata: ${JSON.stringify(toErrorResponse(error).body)}\n\n`;
      let shutdown = () => {};
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // Sent at once: no header leaves the server before the first bytes.
          controller.enqueue(encoder.encode(sseText(first.value)));
          // On shutdown: a last retryable error; the client negotiates again and resumes with Last-Event-ID.
          shutdown = () => {
            end(controller, `retry: 1000\n${errorEvent(shutdownFailure())}`);
            stop.abort();
            void messages.return?.();
          };
        },
        async pull(controller) {
          try {
            const next = await messages.next();
            if (ended) return;
            if (next.done) end(controller);
            else controller.enqueue(encoder.encode(sseText(next.value)));
          } catch (error) {
            end(controller, errorEvent(error));
          }
        },
        async cancel() {
          ended = true;
          forget();
          stop.abort();
          await messages.return?.();
        },
      });
      const response = new Response(body, {
        headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
      });
      forget = openStream(() => shutdown());
      return response;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/realtime/alerts',
    procedure: 'realtime.alerts',
    tenant: 'query',
    input: { query: tenantQuery },
    output: { 200: { description: 'The diagnostics', schema: AlertsSchema } },
    docs: {
      operationId: 'realtimeAlerts',
      summary: "Delivery diagnostics of the tenant's realtime events",
      tag: 'Realtime',
      description: "Connections across every instance, how far they are behind, events dropped, and what needs attention. The tenant is `tenant_id`, else the caller's.",
    },
    sample: {},
    handler: ({ request, call, procedure }) => {
      const { tenant_id: tenantId, ...options } = bodyAndQueryOptions(request, undefined);
      return procedure.query(call(typeof tenantId === 'string' ? tenantId : undefined), untrusted(options));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/realtime/signing-keys/rotate',
    procedure: 'realtime.rotateSigningKeys',
    tenant: 'none',
    input: { body: { schema: RotateSigningKeysInputSchema } },
    output: { 201: { description: 'The new key and the earlier keys still verifying', schema: RotatedSigningKeysSchema } },
    docs: {
      operationId: 'rotateRealtimeSigningKeys',
      summary: 'Rotate the key that signs realtime connection tokens',
      tag: 'Realtime',
      description: 'For platform administrators (`platform.tenants.manage`). A new key signs connection tokens from now on; earlier keys still verify the tokens they signed for ten minutes, or no more with `retire_previous` (a key that may have leaked: connections not yet opened with its tokens are refused). Keys also rotate by themselves once a day.',
    },
    aliases: { retire_previous: 'retirePrevious' },
    sample: { body: {} },
    handler: async ({ body, set, call, procedure }) => {
      const rotated = await procedure.mutation(call(), optionalObject(body));
      set.status = 201;
      return rotated;
    },
  }),
];
