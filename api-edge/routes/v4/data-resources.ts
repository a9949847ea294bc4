import { z } from 'zod';
import {
  CreateResourceInputSchema,
  ListResourcePageInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceListPageSchema,
  ResourceSchema,
  type Resource,
} from '../../../control-plane/contracts.ts';
import { idempotencyHeader, ifMatchHeader, ifNoneMatchHeader, param, resourcePath, typePath } from '../params.ts';
import { bodyWithPath, etagOf, idempotencyKeyOf, jsonQueryValue, queryValue, untrustedQueryValue, versionTag } from '../request-input.ts';
import { contentRange, countModeOf, countQuery, estimated, preferHeader } from '../list-count.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** A v4 resource as the API renders it (the procedure's record, field for field). */
const v4Resource = (resource: Resource) => resource;

/**
 * v4 resources of a tenant's type (`{objectType}` is its key or PascalCase name). GET sends the
 * version as `ETag` and answers 304 to a matching `If-None-Match`; PUT replaces at the version
 * in the body or `If-Match`; DELETE honours `If-Match`. POST takes an `Idempotency-Key`.
 */
export const v4ResourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/:objectType',
    procedure: 'resources.listPage',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: typePath,
      query: {
        page: param(ListResourcePageInputSchema.shape.page, { description: '1-based; not with `cursor`' }),
        limit: ListResourcePageInputSchema.shape.limit,
        sort: param(ListResourcePageInputSchema.shape.sort, { description: 'Fields, `-` for descending; default `-created_at`' }),
        where: param(ListResourcePageInputSchema.shape.where, { json: true, description: 'A structured filter, as JSON' }),
        cursor: param(ListResourcePageInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
        ...countQuery,
      },
      headers: preferHeader,
    },
    output: { 200: { description: 'A page of resources', schema: ResourceListPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }), contentRange: true } },
    docs: {
      operationId: 'listTenantResources',
      summary: 'List resources of a type',
      tag: 'Resources',
      description:
        '`total` is exact while at most 1000 resources match; past that it is PostgreSQL\'s estimate, the page carries `totalExact: false` and `Content-Range` ends in `/*`, unless the request asks for `count=exact` (query parameter or `Prefer: count=exact`). `hasMore` and `nextCursor` are exact either way.',
    },
    sample: { params: { objectType: 'project' } },
    handler: async ({ request, params, set, call, procedure }) => {
      const query = new URL(request.url).searchParams;
      const page = await procedure.query(call(params.tenantId), {
        type: params.objectType,
        page: untrustedQueryValue(query, 'page'),
        limit: queryValue(query, 'limit'),
        sort: queryValue(query, 'sort'),
        where: jsonQueryValue(query, 'where'),
        cursor: queryValue(query, 'cursor'),
        count: countModeOf(request, query),
      });
      const first = page.page > 0 && !queryValue(query, 'cursor') ? (page.page - 1) * page.limit : 0;
      set.headers['content-range'] = contentRange(first, page.items.length, page.total, page.totalExact);
      return { data: page.items.map(v4Resource), total: page.total, ...estimated(page), page: page.page, limit: page.limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/:objectType/:id',
    procedure: 'resources.get',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: resourcePath, headers: ifNoneMatchHeader },
    output: {
      200: { description: 'The resource', schema: ResourceSchema, etag: true },
      304: { description: 'The version named by If-None-Match is current', etag: true },
    },
    docs: { operationId: 'getTenantResource', summary: 'Get a resource', tag: 'Resources' },
    sample: { params: { objectType: 'project', id: NIL_ID } },
    handler: async ({ request, params, set, call, procedure }) => {
      const resource = await procedure.query(call(params.tenantId), { type: params.objectType, id: params.id });
      set.headers.etag = etagOf(resource.version);
      const cached = versionTag(request, 'If-None-Match');
      if (cached === '*' || cached === resource.version) {
        set.status = 304;
        return;
      }
      return v4Resource(resource);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType',
    procedure: 'resources.create',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: typePath, headers: idempotencyHeader, body: { schema: CreateResourceInputSchema.omit({ type: true }) } },
    output: { 201: { description: 'The created resource', schema: ResourceSchema, etag: true } },
    docs: { operationId: 'createTenantResource', summary: 'Create a resource', tag: 'Resources', errors: [409] },
    sample: { params: { objectType: 'project' }, body: { data: { name: 'route case' } } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const created = await procedure.mutation(call(params.tenantId), bodyWithPath(body, { type: params.objectType, ...idempotencyKeyOf(request) }));
      set.status = 201;
      set.headers.etag = etagOf(created.version);
      return v4Resource(created);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/data/resources/:tenantId/:objectType/:id',
    procedure: 'resources.replaceAtVersion',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: resourcePath,
      headers: ifMatchHeader('The version replaced (`"3"`), or `*`'),
      body: { schema: ReplaceAtVersionInputSchema.omit({ type: true, id: true, ifMatch: true }) },
    },
    output: { 200: { description: 'The replaced resource', schema: ResourceSchema, etag: true } },
    docs: {
      operationId: 'replaceTenantResource',
      summary: 'Replace a resource at a version',
      tag: 'Resources',
      description: 'The version replaced is named by `version` in the body or by `If-Match`; one is required.',
      errors: [409, 428],
    },
    sample: { params: { objectType: 'project', id: NIL_ID }, body: { data: { name: 'route case' }, version: 1 } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const replaced = await procedure.mutation(call(params.tenantId), bodyWithPath(body, path));
      set.headers.etag = etagOf(replaced.version);
      return v4Resource(replaced);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/data/resources/:tenantId/:objectType/:id',
    procedure: 'resources.delete',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: resourcePath, headers: ifMatchHeader('Delete only at this version (`"3"`)') },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteTenantResource', summary: 'Delete a resource', tag: 'Resources', errors: [409] },
    sample: { params: { objectType: 'project', id: NIL_ID } },
    handler: async ({ request, params, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      await procedure.mutation(call(params.tenantId), { type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) });
      set.status = 204;
    },
  }),
];
