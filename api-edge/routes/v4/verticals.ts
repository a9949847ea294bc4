import { z } from 'zod';
import {
  CreateVerticalResourceInputSchema,
  ListVerticalResourcesInputSchema,
  ReplaceVerticalResourceInputSchema,
  UpdateVerticalResourceInputSchema,
  ResourceListPageSchema,
  ResourceSchema,
  VerticalKeySchema,
  VerticalSchema,
} from '../../../control-plane/contracts.ts';
import { idempotencyHeader, ifMatchHeader, ifNoneMatchHeader, param, verticalResourcePath, verticalTenantQuery, verticalTypePath } from '../params.ts';
import { bodyWithPath, etagOf, idempotencyKeyOf, jsonQueryValue, queryValue, untrustedQueryValue, versionTag } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';
import { estimated } from '../list-count.ts';

/** The tenant a vertical call names: `tenant_id` in the query string (the company tenant or the app's child tenant), else the caller's. */
const tenantOf = (request: Request) => queryValue(new URL(request.url).searchParams, 'tenant_id');

/**
 * v4 verticals: an enrolled app's surface by its key. `GET /verticals/{key}` is the enrollment,
 * the tenant its resources live in and that tenant's object types; `.../resources/{objectType}`
 * serves those resources as the data API does (lists, `ETag`, `If-None-Match`, `If-Match`,
 * `Idempotency-Key`).
 */
export const v4VerticalRoutes = [
  defineRoute({
    method: 'GET',
    path: '/verticals/:key',
    procedure: 'verticals.get',
    tenant: 'query',
    input: { path: { key: VerticalKeySchema }, query: verticalTenantQuery },
    output: { 200: { description: 'The app', schema: VerticalSchema } },
    docs: {
      operationId: 'getVertical',
      summary: "An app's enrollment, its tenant and object types",
      tag: 'Verticals',
      description: "For members of the app's company tenant or of its child tenant, named by `tenant_id` (else the caller's tenant).",
    },
    sample: { params: { key: 'route-case' } },
    handler: ({ request, params, call, procedure }) => procedure.query(call(tenantOf(request)), { key: params.key }),
  }),
  defineRoute({
    method: 'GET',
    path: '/verticals/:key/resources/:objectType',
    procedure: 'verticals.listResources',
    tenant: 'query',
    rateLimit: 'resources',
    input: {
      path: verticalTypePath,
      query: {
        ...verticalTenantQuery,
        page: param(ListVerticalResourcesInputSchema.shape.page, { description: '1-based; not with `cursor`' }),
        limit: ListVerticalResourcesInputSchema.shape.limit,
        sort: param(ListVerticalResourcesInputSchema.shape.sort, { description: 'Fields, `-` for descending; default `-created_at`' }),
        where: param(ListVerticalResourcesInputSchema.shape.where, { json: true, description: 'A structured filter, as JSON' }),
        cursor: param(ListVerticalResourcesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
      },
    },
    output: { 200: { description: 'A page of resources', schema: ResourceListPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }) } },
    docs: { operationId: 'listVerticalResources', summary: "List an app's resources of a type", tag: 'Verticals', errors: [409] },
    sample: { params: { key: 'route-case', objectType: 'project' } },
    handler: async ({ request, params, call, procedure }) => {
      const query = new URL(request.url).searchParams;
      const page = await procedure.query(call(tenantOf(request)), {
        key: params.key,
        type: params.objectType,
        page: untrustedQueryValue(query, 'page'),
        limit: queryValue(query, 'limit'),
        sort: queryValue(query, 'sort'),
        where: jsonQueryValue(query, 'where'),
        cursor: queryValue(query, 'cursor'),
      });
      return { data: page.items, total: page.total, ...estimated(page), page: page.page, limit: page.limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/verticals/:key/resources/:objectType/:id',
    procedure: 'verticals.getResource',
    tenant: 'query',
    rateLimit: 'resources',
    input: { path: verticalResourcePath, query: verticalTenantQuery, headers: ifNoneMatchHeader },
    output: {
      200: { description: 'The resource', schema: ResourceSchema, etag: true },
      304: { description: 'The version named by If-None-Match is current', etag: true },
    },
    docs: { operationId: 'getVerticalResource', summary: "Get an app's resource", tag: 'Verticals', errors: [409] },
    sample: { params: { key: 'route-case', objectType: 'project', id: NIL_ID } },
    handler: async ({ request, params, set, call, procedure }) => {
      const resource = await procedure.query(call(tenantOf(request)), { key: params.key, type: params.objectType, id: params.id });
      set.headers.etag = etagOf(resource.version);
      const cached = versionTag(request, 'If-None-Match');
      if (cached === '*' || cached === resource.version) {
        set.status = 304;
        return;
      }
      return resource;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/verticals/:key/resources/:objectType',
    procedure: 'verticals.createResource',
    tenant: 'query',
    rateLimit: 'resources',
    input: {
      path: verticalTypePath,
      query: verticalTenantQuery,
      headers: idempotencyHeader,
      body: { schema: CreateVerticalResourceInputSchema.omit({ key: true, type: true, idempotencyKey: true }) },
    },
    output: { 201: { description: 'The created resource', schema: ResourceSchema, etag: true } },
    docs: { operationId: 'createVerticalResource', summary: 'Create a resource of an app', tag: 'Verticals', errors: [409] },
    sample: { params: { key: 'route-case', objectType: 'project' }, body: { data: { name: 'route case' } } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const path = { key: params.key, type: params.objectType, ...idempotencyKeyOf(request) };
      const created = await procedure.mutation(call(tenantOf(request)), bodyWithPath(body, path));
      set.status = 201;
      set.headers.etag = etagOf(created.version);
      return created;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/verticals/:key/resources/:objectType/:id',
    procedure: 'verticals.replaceResource',
    tenant: 'query',
    rateLimit: 'resources',
    input: {
      path: verticalResourcePath,
      query: verticalTenantQuery,
      headers: ifMatchHeader('The version replaced (`"3"`), or `*`'),
      body: { schema: ReplaceVerticalResourceInputSchema.omit({ key: true, type: true, id: true, ifMatch: true }) },
    },
    output: { 200: { description: 'The replaced resource', schema: ResourceSchema, etag: true } },
    docs: {
      operationId: 'replaceVerticalResource',
      summary: "Replace an app's resource at a version",
      tag: 'Verticals',
      description: 'The version replaced is named by `version` in the body or by `If-Match`; one is required.',
      errors: [409, 428],
    },
    sample: { params: { key: 'route-case', objectType: 'project', id: NIL_ID }, body: { data: { name: 'route case' }, version: 1 } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { key: params.key, type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const replaced = await procedure.mutation(call(tenantOf(request)), bodyWithPath(body, path));
      set.headers.etag = etagOf(replaced.version);
      return replaced;
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/verticals/:key/resources/:objectType/:id',
    procedure: 'verticals.updateResource',
    tenant: 'query',
    rateLimit: 'resources',
    input: {
      path: verticalResourcePath,
      query: verticalTenantQuery,
      headers: ifMatchHeader('Change only at this version (`"3"`), or `*`'),
      body: { schema: UpdateVerticalResourceInputSchema.omit({ key: true, type: true, id: true, ifMatch: true }) },
    },
    output: { 200: { description: 'The changed resource', schema: ResourceSchema, etag: true } },
    docs: {
      operationId: 'updateVerticalResource',
      summary: "Change some fields of an app's resource",
      tag: 'Verticals',
      description: '`data` is a JSON merge patch (RFC 7386): the fields given replace the stored ones, `null` removes one. A version in the body or `If-Match` makes the change conditional (409 `VERSION_CONFLICT` when it is not current).',
      errors: [409],
    },
    sample: { params: { key: 'route-case', objectType: 'project', id: NIL_ID }, body: { data: { status: 'done' } } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { key: params.key, type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const updated = await procedure.mutation(call(tenantOf(request)), bodyWithPath(body, path));
      set.headers.etag = etagOf(updated.version);
      return updated;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/verticals/:key/resources/:objectType/:id',
    procedure: 'verticals.deleteResource',
    tenant: 'query',
    rateLimit: 'resources',
    input: { path: verticalResourcePath, query: verticalTenantQuery, headers: ifMatchHeader('Delete only at this version (`"3"`)') },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteVerticalResource', summary: "Delete an app's resource", tag: 'Verticals', errors: [409] },
    sample: { params: { key: 'route-case', objectType: 'project', id: NIL_ID } },
    handler: async ({ request, params, set, call, procedure }) => {
      const ifMatch = versionTag(request, 'If-Match');
      await procedure.mutation(call(tenantOf(request)), {
        key: params.key,
        type: params.objectType,
        id: params.id,
        ...(ifMatch === undefined ? {} : { ifMatch }),
      });
      set.status = 204;
    },
  }),
];
