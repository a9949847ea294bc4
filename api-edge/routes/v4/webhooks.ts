import { z } from 'zod';
import {
  CreateEndpointInputSchema,
  DeliveryDetailSchema,
  DeliveryPageSchema,
  DeliveryRefSchema,
  DeliverySchema,
  EndpointChangesSchema,
  EndpointSchema,
  EndpointWithSecretSchema,
  ListDeliveriesInputSchema,
  ListRefusalsInputSchema,
  ReceivedSchema,
  ReceiveMetaSchema,
  RefusalPageSchema,
  REFUSED_SAMPLE_SIZE,
  RotatedEndpointSchema,
  RotateWebhookSecretInputSchema,
  SourceSchema,
  untrusted,
  WEBHOOK_HEADERS,
} from '../../../control-plane/contracts.ts';
import { MAX_BODY_BYTES } from '../../plugins/body-limit.ts';
import { listOf, param, tenantPath } from '../params.ts';
import { bodyAndQueryOptions, bodyWithPath, jsonObjectBody } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

const endpointPath = { ...tenantPath, source: SourceSchema };
const deliveryPath = { ...tenantPath, deliveryId: DeliveryRefSchema.shape.deliveryId };

/** A rotation's option, in the body or the query string (`?revoke_previous=true`). */
const ROTATE_FLAGS = new Set(['revokePrevious']);
/** Renamed to snake_case; the former names stay accepted (field-aliases.ts). */
const ENDPOINT_ALIASES = { workflow_id: 'workflowId', tolerance_seconds: 'toleranceSeconds', max_body_bytes: 'maxBodyBytes' };

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
export const v4WebhookRoutes = [
  defineRoute({
    method: 'POST',
    path: '/webhooks/:tenantId/endpoints',
    procedure: 'webhooks.createEndpoint',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: CreateEndpointInputSchema } },
    output: { 201: { description: 'The endpoint, with its secret', schema: EndpointWithSecretSchema } },
    docs: {
      operationId: 'createWebhookEndpoint',
      summary: 'Create an inbound webhook endpoint',
      tag: 'Webhooks',
      description: 'For tenant administrators, with the `webhooks` capability. The answer holds the signing secret; no other answer does.',
      errors: [409],
    },
    aliases: ENDPOINT_ALIASES,
    sample: { body: { source: 'route-case', workflow_id: 'project-briefing' } },
    handler: async ({ params, body, set, call, procedure }) => {
      const created = await procedure.mutation(call(params.tenantId), jsonObjectBody(body));
      set.status = 201;
      return created;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:tenantId/endpoints',
    procedure: 'webhooks.listEndpoints',
    tenant: 'path',
    input: { path: tenantPath },
    output: { 200: { description: 'The endpoints, by source', schema: listOf(EndpointSchema) } },
    docs: { operationId: 'listWebhookEndpoints', summary: "The tenant's webhook endpoints", tag: 'Webhooks' },
    sample: {},
    handler: async ({ params, call, procedure }) => ({
      data: await procedure.query(call(params.tenantId), {}),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:tenantId/endpoints/:source',
    procedure: 'webhooks.getEndpoint',
    tenant: 'path',
    input: { path: endpointPath },
    output: { 200: { description: 'The endpoint', schema: EndpointSchema } },
    docs: { operationId: 'getWebhookEndpoint', summary: 'A webhook endpoint', tag: 'Webhooks' },
    sample: { params: { source: 'route-case' } },
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), { source: params.source }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/webhooks/:tenantId/endpoints/:source',
    procedure: 'webhooks.updateEndpoint',
    tenant: 'path',
    input: { path: endpointPath, body: { schema: EndpointChangesSchema } },
    output: { 200: { description: 'The endpoint', schema: EndpointSchema } },
    docs: { operationId: 'updateWebhookEndpoint', summary: 'Change a webhook endpoint', tag: 'Webhooks' },
    aliases: ENDPOINT_ALIASES,
    sample: { params: { source: 'route-case' }, body: { description: 'route case' } },
    handler: ({ params, body, call, procedure }) => procedure.mutation(call(params.tenantId), bodyWithPath(body, { source: params.source })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/:tenantId/endpoints/:source',
    procedure: 'webhooks.deleteEndpoint',
    tenant: 'path',
    input: { path: endpointPath },
    output: { 204: { description: 'Removed' } },
    docs: { operationId: 'deleteWebhookEndpoint', summary: 'Remove a webhook endpoint and its deliveries', tag: 'Webhooks' },
    sample: { params: { source: 'route-case' } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { source: params.source });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:tenantId/endpoints/:source/rotate-secret',
    procedure: 'webhooks.rotateSecret',
    tenant: 'path',
    input: {
      path: endpointPath,
      query: { revoke_previous: param(RotateWebhookSecretInputSchema.shape.revokePrevious, { description: 'May be given in the body instead' }) },
      body: { schema: RotateWebhookSecretInputSchema.omit({ source: true }), required: false },
    },
    output: { 200: { description: 'The endpoint, with its new secret', schema: RotatedEndpointSchema } },
    docs: {
      operationId: 'rotateWebhookSecret',
      summary: "Replace a webhook endpoint's secret",
      tag: 'Webhooks',
      description: 'The new secret is in this answer only. The secret it replaces keeps working for 24 hours (until `previousSecretExpiresAt`), so that senders can switch; `revoke_previous: true` (in the body, or `?revoke_previous=true`) stops it at once, for a leaked secret. An older secret stops at once.',
    },
    aliases: { revoke_previous: 'revokePrevious' },
    sample: { params: { source: 'route-case' } },
    handler: ({ request, params, body, call, procedure }) =>
      procedure.mutation(call(params.tenantId), bodyWithPath(bodyAndQueryOptions(request, body, ROTATE_FLAGS), { source: params.source })),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:tenantId/endpoints/:source/deliveries',
    procedure: 'webhooks.listDeliveries',
    tenant: 'path',
    input: {
      path: endpointPath,
      query: { status: ListDeliveriesInputSchema.shape.status, limit: ListDeliveriesInputSchema.shape.limit, offset: ListDeliveriesInputSchema.shape.offset },
    },
    output: { 200: { description: 'A page of deliveries', schema: DeliveryPageSchema } },
    docs: {
      operationId: 'listWebhookDeliveries',
      summary: "A webhook endpoint's deliveries, newest first",
      tag: 'Webhooks',
      description: `Refused deliveries too (\`status\` \`rejected\`, with the \`reason\`): the newest ${REFUSED_SAMPLE_SIZE} of the endpoint; \`GET .../refusals\` counts them all.`,
    },
    sample: { params: { source: 'route-case' } },
    handler: ({ request, params, call, procedure }) =>
      procedure.query(call(params.tenantId), bodyWithPath(bodyAndQueryOptions(request, undefined), { source: params.source })),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:tenantId/endpoints/:source/refusals',
    procedure: 'webhooks.listRefusals',
    tenant: 'path',
    input: { path: endpointPath, query: { limit: ListRefusalsInputSchema.shape.limit, offset: ListRefusalsInputSchema.shape.offset } },
    output: { 200: { description: 'A page of hourly windows', schema: RefusalPageSchema } },
    docs: {
      operationId: 'listWebhookRefusals',
      summary: "How many deliveries a webhook endpoint refused, per hour and reason, newest first",
      tag: 'Webhooks',
      description: `Every refused delivery is counted here, over the last 30 days; only the newest ${REFUSED_SAMPLE_SIZE} of an endpoint are kept as deliveries (\`status\` \`rejected\`). \`refused\` sums all windows.`,
    },
    sample: { params: { source: 'route-case' } },
    handler: ({ request, params, call, procedure }) =>
      procedure.query(call(params.tenantId), bodyWithPath(bodyAndQueryOptions(request, undefined), { source: params.source })),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:tenantId/deliveries/:deliveryId',
    procedure: 'webhooks.getDelivery',
    tenant: 'path',
    input: { path: deliveryPath },
    output: { 200: { description: 'The delivery', schema: DeliveryDetailSchema } },
    docs: { operationId: 'getWebhookDelivery', summary: 'A webhook delivery, with its verified payload', tag: 'Webhooks' },
    sample: { params: { deliveryId: NIL_ID } },
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), { deliveryId: params.deliveryId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:tenantId/deliveries/:deliveryId/replay',
    procedure: 'webhooks.replayDelivery',
    tenant: 'path',
    input: { path: deliveryPath },
    output: { 201: { description: 'The new delivery', schema: DeliverySchema } },
    docs: {
      operationId: 'replayWebhookDelivery',
      summary: "Start a delivery's workflow again",
      tag: 'Webhooks',
      description: "A new delivery with the verified payload of this one (`replayOf`), started as the caller. A refused delivery has no payload to replay (409).",
      errors: [409],
    },
    sample: { params: { deliveryId: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      const replayed = await procedure.mutation(call(params.tenantId), { deliveryId: params.deliveryId });
      set.status = 201;
      return replayed;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/:tenantId/:source',
    procedure: 'webhooks.receive',
    tenant: 'path',
    input: {
      path: endpointPath,
      headers: {
        [WEBHOOK_HEADERS.timestamp]: param(ReceiveMetaSchema.shape.timestamp.unwrap(), { required: true, description: 'Unix time in seconds' }),
        [WEBHOOK_HEADERS.signature]: param(ReceiveMetaSchema.shape.signature.unwrap(), { required: true, description: '`sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>`' }),
        [WEBHOOK_HEADERS.deliveryId]: param(ReceiveMetaSchema.shape.deliveryId.unwrap(), { required: false, description: "The sender's id of the delivery; taken once" }),
      },
      body: { schema: z.record(z.string(), z.unknown()), description: 'A JSON object, read as the exact bytes signed' },
    },
    output: { 202: { description: 'Stored; the workflow was started (`accepted`) or could not be (`failed`, to be replayed)', schema: ReceivedSchema } },
    docs: {
      operationId: 'receiveWebhook',
      summary: 'Deliver a webhook (called by the sending system)',
      tag: 'Webhooks',
      description: `No user token: \`${WEBHOOK_HEADERS.signature}: sha256=<hex>\` is the HMAC-SHA256, keyed by the endpoint's secret, of \`<${WEBHOOK_HEADERS.timestamp}>.<body>\` (the exact bytes sent), and the timestamp (Unix seconds) must be within the endpoint's tolerance (default 300 s). A signature or \`${WEBHOOK_HEADERS.deliveryId}\` seen before is refused (409), as are a bad or missing signature or timestamp (401) and a body over the endpoint's limit (413); every refusal is counted, and the newest ${REFUSED_SAMPLE_SIZE} are kept as deliveries. Deliveries spend a budget per endpoint, however the path spells the tenant (id in any letter case, or slug; a trailing slash). A verified delivery starts the endpoint's workflow with the body as input.`,
      errors: [409],
      security: 'webhookSignature',
    },
    // No caller token: the delivery's signature authenticates it. Here it names no endpoint (404); test/e2e/v4-webhooks.test.ts
    // covers a signature of one tenant's endpoint sent to another tenant's.
    sample: { params: { source: 'route-case' }, body: {} },
    // The signature covers the exact bytes: Elysia must not read them.
    parse: 'none',
    handler: async ({ request, params, set, call, procedure }) => {
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
      const received = await procedure.upload(call(), { stream: await deliveryBody(request), meta: untrusted(meta) });
      set.status = 202;
      return received;
    },
  }),
];
