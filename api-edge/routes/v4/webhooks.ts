import { Elysia } from 'elysia';
import { untrusted, WEBHOOK_HEADERS, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, bodyWithPath, jsonObjectBody } from '../request-input.ts';

/**
 * v4 webhooks: a tenant administrator's endpoints (one per source; the secret is in the answer
 * that creates or rotates it, and no other), their deliveries and replays; and the inbound
 * delivery `POST /v4/webhooks/{tenantId}/{source}`, which outside systems call without a token:
 * its body goes unread to the control plane, which checks its signature over the exact bytes.
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
    .post('/webhooks/:tenantId/endpoints/:source/rotate-secret', ({ request, params }) =>
      cp.mutation(calls.of(request, params.tenantId), 'webhooks', 'rotateSecret', { source: params.source }),
    )
    .get('/webhooks/:tenantId/endpoints/:source/deliveries', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'webhooks', 'listDeliveries', bodyWithPath(bodyAndQueryOptions(request, undefined), { source: params.source })),
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
        // No body is an empty one, which no signature check passes.
        const stream = request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
        const received = await cp.upload(calls.of(request), 'webhooks', 'receive', { stream, meta: untrusted(meta) });
        set.status = 202;
        return received;
      },
      // The signature covers the exact bytes: Elysia must not read them.
      { parse: 'none' },
    );
}
