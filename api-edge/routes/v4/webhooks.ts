import { Elysia } from 'elysia';
import { untrusted, WEBHOOK_HEADERS, type ControlPlane } from '../../../control-plane/contracts.ts';
import { MAX_BODY_BYTES } from '../../plugins/body-limit.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, bodyWithPath, jsonObjectBody } from '../request-input.ts';

/** A rotation's option, in the body or the query string (`?revokePrevious=true`). */
const ROTATE_FLAGS = new Set(['revokePrevious']);

/** Past the API's limit, how much more of a delivery the edge reads and drops so that its sender gets the 413 rather than a reset connection. */
const DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * A delivery's body as the edge reads it: up to the API's limit and the chunk that passes it (so
 * that the control plane sees it is over), all of it read off the connection before the answer,
 * up to DRAIN_BYTES. A body declared or found larger than that is left where it stopped, never
 * cancelled (the server then closes the connection).
 */
async function deliveryBody(request: Request): Promise<ReadableStream<Uint8Array>> {
  const kept: Uint8Array[] = [];
  if (request.body && Number(request.headers.get('content-length') ?? 0) <= DRAIN_BYTES) {
    const reader = request.body.getReader();
    let size = 0;
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      if (size <= MAX_BODY_BYTES) kept.push(next.value);
      size += next.value.byteLength;
      if (size > DRAIN_BYTES) break;
    }
  }
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of kept) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/**
 * v4 webhooks: a tenant administrator's endpoints (one per source; the secret is in the answer
 * that creates or rotates it, and no other), their deliveries, refusal counts and replays; and the inbound
 * delivery `POST /v4/webhooks/{tenantId}/{source}`, which outside systems call without a token:
 * its body's bytes go as they came to the control plane, which checks their signature.
 */
export function v4WebhookRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-webhooks' })
    .post('/webhooks/:tenantId/endpoints', async ({ request, params, body, set }) => {
      const created = await cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'createEndpoint', jsonObjectBody(body));
      set.status = 201;
      return created;
    })
    .get('/webhooks/:tenantId/endpoints', async ({ request, params }) => ({
      data: await cp.query(calls.of(request, params.tenantId), 'webhooks', 'listEndpoints', {}),
    }))
    .get('/webhooks/:tenantId/endpoints/:source', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'webhooks', 'getEndpoint', { source: params.source }),
    )
    .patch('/webhooks/:tenantId/endpoints/:source', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'updateEndpoint', bodyWithPath(body, { source: params.source })),
    )
    .delete('/webhooks/:tenantId/endpoints/:source', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'deleteEndpoint', { source: params.source });
      set.status = 204;
    })
    .post('/webhooks/:tenantId/endpoints/:source/rotate-secret', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'rotateSecret', bodyWithPath(bodyAndQueryOptions(request, body, ROTATE_FLAGS), { source: params.source })),
    )
    .get('/webhooks/:tenantId/endpoints/:source/deliveries', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'webhooks', 'listDeliveries', bodyWithPath(bodyAndQueryOptions(request, undefined), { source: params.source })),
    )
    .get('/webhooks/:tenantId/endpoints/:source/refusals', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'webhooks', 'listRefusals', bodyWithPath(bodyAndQueryOptions(request, undefined), { source: params.source })),
    )
    .get('/webhooks/:tenantId/deliveries/:deliveryId', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'webhooks', 'getDelivery', { deliveryId: params.deliveryId }),
    )
    .post('/webhooks/:tenantId/deliveries/:deliveryId/replay', async ({ request, params, set }) => {
      const replayed = await cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'replayDelivery', { deliveryId: params.deliveryId });
      set.status = 201;
      return replayed;
    })
    .post(
      '/webhooks/:tenantId/:source',
      async ({ request, params, set }) => {
        const header = (name: string) => request.headers.get(name) ?? undefined;
        const meta = {
          tenantId: params.tenantId,
          source: params.source,
          timestamp: header(WEBHOOK_HEADERS.timestamp),
          signature: header(WEBHOOK_HEADERS.signature),
          deliveryId: header(WEBHOOK_HEADERS.deliveryId),
          contentType: header('content-type'),
          contentLength: header('content-length'),
          userAgent: header('user-agent'),
        };
        const received = await cp.upload(calls.of(request), 'webhooks', 'receive', { stream: await deliveryBody(request), meta: untrusted(meta) });
        set.status = 202;
        return received;
      },
      // The signature covers the exact bytes: Elysia must not read them.
      { parse: 'none' },
    );
}
