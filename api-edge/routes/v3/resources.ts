import { ListResourcesInputSchema, ResourceDataSchema, ResourceRefSchema, ValidationError } from '../../../control-plane/contracts.ts';
import { contentRange, countModeOf, countQuery, preferHeader } from '../list-count.ts';
import { idempotencyHeader, param } from '../params.ts';
import { idempotencyKeyOf, queryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';
import { resourceData, v3Resource, v3ResourcePage, V3ResourcePageSchema, V3ResourceSchema } from './shape.ts';

/**
 * `filter[<field>]` query parameters, keyed by what stands inside the brackets. One given twice is
 * a 400 rather than one of them silently kept (`filter[f.in]` takes several values). Built from
 * entries, so every name is an own key (`filter[__proto__]` included) that the procedure checks.
 */
function filtersOf(params: URLSearchParams): Record<string, string> {
  const filters = new Map<string, string>();
  for (const [key, value] of params) {
    const match = /^filter\[(.+)\]$/.exec(key);
    if (!match) continue;
    if (filters.has(match[1]!)) throw ValidationError.field(key, 'is given more than once; use .in for several values');
    filters.set(match[1]!, value);
  }
  return Object.fromEntries(filters);
}

/** v3 resources: translates REST to `resources.*` procedures and shapes records flat. */
export const v3ResourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/resources',
    procedure: 'resources.list',
    tenant: 'header',
    rateLimit: 'resources',
    input: {
      query: {
        type: param(ListResourcesInputSchema.shape.type, { required: true }),
        filter: param(ListResourcesInputSchema.shape.filter, { deepObject: true, description: '`filter[field]=value`, `filter[field.gte]=`, `filter[field.in]=a,b`' }),
        sort: param(ListResourcesInputSchema.shape.sort, { description: 'Fields, `-` for descending: `-createdAt,name`' }),
        limit: ListResourcesInputSchema.shape.limit,
        offset: ListResourcesInputSchema.shape.offset,
        cursor: param(ListResourcesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`; not with `offset`" }),
        ...countQuery,
      },
      headers: preferHeader,
    },
    output: { 200: { description: 'A page of resources', schema: V3ResourcePageSchema, contentRange: true } },
    docs: {
      operationId: 'listResources',
      summary: 'List resources of a type',
      tag: 'Resources',
      description:
        '`total` is exact while at most 1000 resources match; past that it is PostgreSQL\'s estimate, the page carries `totalExact: false` and `Content-Range` ends in `/*`, unless the request asks for `count=exact` (query parameter or `Prefer: count=exact`). `hasMore` and `nextCursor` are exact either way.',
    },
    sample: { query: 'type=project' },
    handler: async ({ request, set, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const page = await procedure.query(call(), {
        type: queryValue(params, 'type') ?? '',
        filter: filtersOf(params),
        sort: queryValue(params, 'sort'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
        cursor: queryValue(params, 'cursor'),
        count: countModeOf(request, params),
      });
      set.headers['content-range'] = contentRange(Number(queryValue(params, 'offset') ?? 0), page.items.length, page.total, page.totalExact);
      return v3ResourcePage(page);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/resources/:type/:id',
    procedure: 'resources.get',
    tenant: 'header',
    rateLimit: 'resources',
    input: { path: ResourceRefSchema.shape },
    output: { 200: { description: 'The resource', schema: V3ResourceSchema } },
    docs: { operationId: 'getResource', summary: 'Get a resource', tag: 'Resources' },
    sample: { params: { type: 'project', id: NIL_ID } },
    handler: async ({ params, call, procedure }) => v3Resource(await procedure.query(call(), { type: params.type, id: params.id })),
  }),
  defineRoute({
    method: 'POST',
    path: '/resources/:type',
    procedure: 'resources.create',
    tenant: 'header',
    rateLimit: 'resources',
    input: {
      path: { type: ResourceRefSchema.shape.type },
      headers: idempotencyHeader,
      body: { schema: ResourceDataSchema, description: "The resource's fields; `id`, `type`, `createdAt`, `updatedAt`, `version`, `tenantId`, `createdBy` and `updatedBy` are the server's, and ignored" },
    },
    output: { 201: { description: 'The created resource', schema: V3ResourceSchema } },
    docs: { operationId: 'createResource', summary: 'Create a resource', tag: 'Resources', errors: [409] },
    sample: { params: { type: 'project' }, body: { name: 'route case' } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const created = await procedure.mutation(call(), { type: params.type, data: resourceData(body), ...idempotencyKeyOf(request) });
      set.status = 201;
      return v3Resource(created);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/resources/:type/:id',
    procedure: 'resources.replace',
    tenant: 'header',
    rateLimit: 'resources',
    input: {
      path: ResourceRefSchema.shape,
      body: { schema: ResourceDataSchema, description: "The resource's new fields (the server's own, as on create, are ignored)" },
    },
    output: { 200: { description: 'The replaced resource', schema: V3ResourceSchema } },
    docs: { operationId: 'replaceResource', summary: 'Replace a resource', tag: 'Resources', errors: [409] },
    sample: { params: { type: 'project', id: NIL_ID }, body: { name: 'route case' } },
    handler: async ({ params, body, call, procedure }) =>
      v3Resource(await procedure.mutation(call(), { type: params.type, id: params.id, data: resourceData(body) })),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/resources/:type/:id',
    procedure: 'resources.update',
    tenant: 'header',
    rateLimit: 'resources',
    input: {
      path: ResourceRefSchema.shape,
      body: { schema: ResourceDataSchema, description: 'A JSON merge patch (RFC 7386): objects merge, `null` removes a field' },
    },
    output: { 200: { description: 'The updated resource', schema: V3ResourceSchema } },
    docs: { operationId: 'updateResource', summary: 'Update a resource', tag: 'Resources', errors: [409] },
    sample: { params: { type: 'project', id: NIL_ID }, body: { name: 'route case' } },
    handler: async ({ params, body, call, procedure }) =>
      v3Resource(await procedure.mutation(call(), { type: params.type, id: params.id, patch: resourceData(body) })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/resources/:type/:id',
    procedure: 'resources.delete',
    tenant: 'header',
    rateLimit: 'resources',
    input: { path: ResourceRefSchema.shape },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteResource', summary: 'Delete a resource', tag: 'Resources', errors: [409] },
    sample: { params: { type: 'project', id: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(), { type: params.type, id: params.id });
      set.status = 204;
    },
  }),
];
