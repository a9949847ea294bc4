import { z } from 'zod';
import {
  BatchCreateInputSchema,
  BatchDeletedSchema,
  BatchDeleteInputSchema,
  BatchUpdateInputSchema,
  ResourceHistoryInputSchema,
  ResourceDataSchema,
  ResourceHistoryPageSchema,
  ResourceSchema,
  untrusted,
  ValidationError,
} from '../../../control-plane/contracts.ts';
import { idempotencyHeader, listOf, resourcePath, typePath } from '../params.ts';
import { bodyWithPath, idempotencyKeyOf, jsonObjectBody, untrustedQueryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

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
export const v4ResourceBatchRoutes = [
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/:objectType/:id/history',
    procedure: 'resources.history',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: resourcePath, query: { page: ResourceHistoryInputSchema.shape.page, limit: ResourceHistoryInputSchema.shape.limit } },
    output: { 200: { description: 'A page of version entries', schema: ResourceHistoryPageSchema.omit({ items: true }).extend({ data: ResourceHistoryPageSchema.shape.items }) } },
    docs: {
      operationId: 'getResourceHistory',
      summary: "A resource's history, newest first",
      tag: 'Resources',
      description: 'Every create, update, action and delete as a version entry; it outlives the delete.',
    },
    sample: { params: { objectType: 'project', id: NIL_ID } },
    async handler({ request, params, call, procedure }) {
      const query = new URL(request.url).searchParams;
      const history = await procedure.query(call(params.tenantId), {
        type: params.objectType,
        id: params.id,
        page: untrustedQueryValue(query, 'page'),
        limit: untrustedQueryValue(query, 'limit'),
      });
      return { data: history.items, total: history.total, page: history.page, limit: history.limit, hasMore: history.hasMore };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/batch/create',
    procedure: 'resources.batchCreate',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: typePath,
      headers: idempotencyHeader,
      body: { schema: z.union([BatchCreateInputSchema.shape.items, BatchCreateInputSchema.pick({ items: true }), ResourceDataSchema.describe('One item: an object without an `items` list')]) },
    },
    output: { 201: { description: 'The created resources', schema: listOf(ResourceSchema) } },
    docs: {
      operationId: 'batchCreateResources',
      summary: 'Create up to 1000 resources, all or none',
      tag: 'Batches',
      description: 'The body is an array of data objects, `{items: [...]}`, or one object. A failure names the item (`details.index`).',
      errors: [409],
    },
    sample: { params: { objectType: 'project' }, body: { items: [{ name: 'route case' }] } },
    async handler({ request, params, body, set, call, procedure }) {
      const created = await procedure.mutation(call(params.tenantId), {
        type: params.objectType,
        items: untrusted(batchItems(body, true)),
        ...idempotencyKeyOf(request),
      });
      set.status = 201;
      return { data: created.items };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/batch/update',
    procedure: 'resources.batchUpdate',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: typePath,
      headers: idempotencyHeader,
      body: { schema: z.union([BatchUpdateInputSchema.shape.items, BatchUpdateInputSchema.pick({ items: true })]) },
    },
    output: { 200: { description: 'The replaced resources', schema: listOf(ResourceSchema) } },
    docs: { operationId: 'batchUpdateResources', summary: 'Replace up to 1000 resources at their versions, all or none', tag: 'Batches', errors: [409] },
    sample: { params: { objectType: 'project' }, body: { items: [{ id: NIL_ID, data: { name: 'route case' }, version: 1 }] } },
    async handler({ request, params, body, call, procedure }) {
      const updated = await procedure.mutation(call(params.tenantId), {
        type: params.objectType,
        items: untrusted(batchItems(body, false)),
        ...idempotencyKeyOf(request),
      });
      return { data: updated.items };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/batch/delete',
    procedure: 'resources.batchDelete',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: typePath,
      headers: idempotencyHeader,
      body: { schema: z.union([BatchDeleteInputSchema.shape.ids, BatchDeleteInputSchema.pick({ ids: true })]) },
    },
    output: { 200: { description: 'How many were deleted', schema: BatchDeletedSchema } },
    docs: { operationId: 'batchDeleteResources', summary: 'Delete up to 1000 resources, all or none', tag: 'Batches', errors: [409] },
    sample: { params: { objectType: 'project' }, body: { ids: [NIL_ID] } },
    handler({ request, params, body, call, procedure }) {
      const ids = Array.isArray(body) ? untrusted({ ids: body }) : body;
      return procedure.mutation(call(params.tenantId), bodyWithPath(ids, { type: params.objectType, ...idempotencyKeyOf(request) }));
    },
  }),
];
