import { z } from 'zod';
import {
  ActionResultSchema,
  AggregateResourcesInputSchema,
  AggregateResultSchema,
  ApplyActionInputSchema,
  QueryResourcesInputSchema,
  ResourceQueryPageSchema,
  ResourceSchema,
} from '../../../control-plane/contracts.ts';
import { ifMatchHeader, param, resourcePath, tenantPath, typePath } from '../params.ts';
import { bodyWithPath, etagOf, jsonObjectBody, optionalObject, versionTag } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';
import { estimated } from '../list-count.ts';

/**
 * v4 data beyond one resource: a query across a tenant's types, an aggregate of one type's
 * resources, and the actions declared on a type. `POST .../{tenantId}/query` is a static segment,
 * so it wins over a create of a type named `query` (a key no type may have).
 */
export const v4ResourceQueryRoutes = [
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/query',
    procedure: 'resources.query',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: tenantPath, body: { schema: QueryResourcesInputSchema } },
    output: { 200: { description: 'A page of resources', schema: ResourceQueryPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }) } },
    docs: {
      operationId: 'queryTenantResources',
      summary: 'Query resources across types',
      tag: 'Resources',
      description: 'Newest first; each item carries its type.',
    },
    sample: { body: { types: ['project'] } },
    handler: async ({ params, body, call, procedure }) => {
      const page = await procedure.query(call(params.tenantId), jsonObjectBody(body));
      return { data: page.items, total: page.total, ...estimated(page), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/aggregate',
    procedure: 'resources.aggregate',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: typePath, body: { schema: AggregateResourcesInputSchema.omit({ type: true }) } },
    output: { 200: { description: 'The groups', schema: AggregateResultSchema.omit({ items: true }).extend({ data: AggregateResultSchema.shape.items }) } },
    docs: {
      operationId: 'aggregateTenantResources',
      summary: "Aggregate a type's resources",
      tag: 'Resources',
      description: 'One row per group: the group keys as named, and each metric by its alias (`{"n": {"count": "*"}}`).',
    },
    aliases: { group_by: 'groupBy' },
    sample: { params: { objectType: 'project' }, body: { group_by: ['status'], metrics: { n: { count: '*' } } } },
    handler: async ({ params, body, call, procedure }) => {
      const result = await procedure.query(call(params.tenantId), bodyWithPath(body, { type: params.objectType }));
      return { data: result.items, hasMore: result.hasMore };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/:id/actions/:action',
    procedure: 'resources.applyAction',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: { ...resourcePath, action: param(ApplyActionInputSchema.shape.action, { description: 'An action the object type declares' }) },
      headers: ifMatchHeader('Apply only at this version (`"3"`)'),
      body: { schema: ApplyActionInputSchema.omit({ type: true, id: true, action: true, ifMatch: true }), required: false },
    },
    output: { 200: { description: 'The resource after the action, and the execution it started', schema: ActionResultSchema, etag: true } },
    docs: {
      operationId: 'applyResourceAction',
      summary: 'Apply an action the object type declares',
      tag: 'Resources',
      description: "A guarded transition and/or a workflow started with the resource as input, at the version in the body or `If-Match` when given.",
      errors: [409],
    },
    sample: { params: { objectType: 'project', id: NIL_ID, action: 'approve' }, body: {} },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { type: params.objectType, id: params.id, action: params.action, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const result = await procedure.mutation(call(params.tenantId), bodyWithPath(optionalObject(body), path));
      set.headers.etag = etagOf(result.resource.version);
      return result.executionId === undefined ? { resource: result.resource } : { resource: result.resource, executionId: result.executionId };
    },
  }),
];
