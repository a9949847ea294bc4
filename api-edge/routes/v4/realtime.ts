import { Elysia } from 'elysia';
import { UnauthorizedError, untrusted, type ControlPlane, type StreamMessage } from '../../../control-plane/contracts.ts';
import { toErrorResponse } from '../../errors.ts';
import type { RequestCalls } from '../../request-context.ts';
import { V4_BASE } from '../bases.ts';
import { bodyAndQueryOptions, jsonObjectBody, optionalObject, queryValue, tenantOption } from '../request-input.ts';

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
 * changes, resumed after `Last-Event-ID` (or `?lastEventId=`). Alerts report how delivery goes;
 * platform operators rotate the key that signs the tokens.
 */
export function v4RealtimeRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-realtime' })
    .post('/realtime/negotiate', async ({ request, body }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const negotiation = await cp.mutation(calls.of(request, tenantId), 'realtime', 'negotiate', jsonObjectBody(rest));
      const url = new URL(`${V4_BASE}/realtime/connect`, request.url);
      url.searchParams.set('token', negotiation.token);
      return { ...negotiation, url: url.toString() };
    })
    .get('/realtime/connect', async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const token = queryValue(params, 'token') ?? BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
      if (!token) throw new UnauthorizedError('a realtime token is required: negotiate one (POST /v4/realtime/negotiate), then connect with ?token=');
      const lastEventId = request.headers.get('last-event-id') ?? queryValue(params, 'lastEventId');
      const input = { token: untrusted(token), ...(lastEventId === undefined ? {} : { lastEventId: untrusted(lastEventId) }) };
      const stop = new AbortController();
      request.signal?.addEventListener('abort', () => stop.abort(), { once: true });
      const messages = cp.subscription(calls.of(request), 'realtime', 'stream', input, { signal: stop.signal })[Symbol.asyncIterator]();
      // A refusal (token, capability, limit) comes before the first message, as a JSON answer.
      const first = await messages.next();
      if (first.done) throw new Error('the realtime connection ended before it was ready');
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // Sent at once: no header leaves the server before the first bytes.
          controller.enqueue(encoder.encode(sseText(first.value)));
        },
        async pull(controller) {
          try {
            const next = await messages.next();
            if (next.done) controller.close();
            else controller.enqueue(encoder.encode(sseText(next.value)));
          } catch (error) {
            controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(toErrorResponse(error).body)}\n\n`));
            controller.close();
          }
        },
        async cancel() {
          stop.abort();
          await messages.return?.();
        },
      });
      return new Response(body, {
        headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
      });
    })
    .get('/realtime/alerts', ({ request }) => {
      const { tenant_id: tenantId, ...options } = bodyAndQueryOptions(request, undefined);
      return cp.query(calls.of(request, typeof tenantId === 'string' ? tenantId : undefined), 'realtime', 'alerts', untrusted(options));
    })
    .post('/platform/realtime/signing-keys/rotate', async ({ request, body, set }) => {
      const rotated = await cp.mutation(calls.of(request), 'realtime', 'rotateSigningKeys', optionalObject(body));
      set.status = 201;
      return rotated;
    });
}
