import { Elysia } from 'elysia';
import { untrusted, ValidationError, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyWithPath, idempotencyKeyOf, jsonObjectBody, untrustedQueryValue } from '../request-input.ts';

/**
 * The items of a batch body: a JSON array, or `{items: [...]}` (an object whose `items` is an array,
 * and nothing beside it); any other object is one item.
 */
function batchItems(body: unknown, singleObject: boolean): unknown {
  if (Array.isArray(body)) return body;
  const fields = jsonObjectBody(body);
  if (!Array.isArray(fields.items)) {
    if (singleObject) return [fields];
    throw ValidationError.field('items', 'must be a list of items (or send the list itself)');
  }
  const other = Object.keys(fields).find((name) => name !== 'items');
  if (other !== undefined) throw ValidationError.field(other, 'is not a field of a batch: send {items: [...]}');
  return fields.items;
}

/**
 * v4 batches and history of a tenant's resources of one type. A batch is atomic: all items apply
 * or none, and a failure names the item's index (`details.index`, its error in `details.error`).
 * `Idempotency-Key` on the batches (and on create) replays the first answer to a retry.
 */
export function v4ResourceBatchRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-batches' })
    .get('/data/resources/:tenantId/:objectType/:id/history', async ({ request, params }) => {
      const query = new URL(request.url).searchParams;
      const history = await cp.query(calls.of(request, params.tenantId), 'resources', 'history', {
        type: params.objectType,
        id: params.id,
        page: untrustedQueryValue(query, 'page'),
        limit: untrustedQueryValue(query, 'limit'),
      });
      return { data: history.items, total: history.total, page: history.page, limit: history.limit, hasMore: history.hasMore };
    })
    .post('/data/resources/:tenantId/:objectType/batch/create', async ({ request, params, body, set }) => {
      const created = await cp.mutation(calls.of(request, params.tenantId), 'resources', 'batchCreate', {
        type: params.objectType,
        items: untrusted(batchItems(body, true)),
        ...idempotencyKeyOf(request),
      });
      set.status = 201;
      return { data: created.items };
    })
    .post('/data/resources/:tenantId/:objectType/batch/update', async ({ request, params, body }) => {
      const updated = await cp.mutation(calls.of(request, params.tenantId), 'resources', 'batchUpdate', {
        type: params.objectType,
        items: untrusted(batchItems(body, false)),
        ...idempotencyKeyOf(request),
      });
      return { data: updated.items };
    })
    .post('/data/resources/:tenantId/:objectType/batch/delete', async ({ request, params, body }) => {
      const ids = Array.isArray(body) ? untrusted({ ids: body }) : body;
      return cp.mutation(calls.of(request, params.tenantId), 'resources', 'batchDelete', bodyWithPath(ids, { type: params.objectType, ...idempotencyKeyOf(request) }));
    });
}
