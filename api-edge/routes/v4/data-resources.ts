import { Elysia } from 'elysia';
import type { ControlPlane, Resource } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyWithPath, etagOf, idempotencyKeyOf, jsonQueryValue, queryValue, untrustedQueryValue, versionTag } from '../request-input.ts';

/** A v4 resource as the API renders it (the procedure's record, field for field). */
const v4Resource = (resource: Resource) => resource;

/**
 * v4 resources of a tenant's type (`{objectType}` is its key or PascalCase name). GET sends the
 * version as `ETag` and answers 304 to a matching `If-None-Match`; PUT replaces at the version
 * in the body or `If-Match`; DELETE honours `If-Match`. POST takes an `Idempotency-Key`.
 */
export function v4ResourceRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resources' })
    .get('/data/resources/:tenantId/:objectType', async ({ request, params }) => {
      const query = new URL(request.url).searchParams;
      const page = await cp.query(calls.of(request, params.tenantId), 'resources', 'listPage', {
        type: params.objectType,
        page: untrustedQueryValue(query, 'page'),
        limit: queryValue(query, 'limit'),
        sort: queryValue(query, 'sort'),
        where: jsonQueryValue(query, 'where'),
        cursor: queryValue(query, 'cursor'),
      });
      return { data: page.items.map(v4Resource), total: page.total, page: page.page, limit: page.limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
    })
    .get('/data/resources/:tenantId/:objectType/:id', async ({ request, params, set }) => {
      const resource = await cp.query(calls.of(request, params.tenantId), 'resources', 'get', { type: params.objectType, id: params.id });
      set.headers.etag = etagOf(resource.version);
      const cached = versionTag(request, 'If-None-Match');
      if (cached === '*' || cached === resource.version) {
        set.status = 304;
        return;
      }
      return v4Resource(resource);
    })
    .post('/data/resources/:tenantId/:objectType', async ({ request, params, body, set }) => {
      const created = await cp.mutation(calls.of(request, params.tenantId), 'resources', 'create', bodyWithPath(body, { type: params.objectType, ...idempotencyKeyOf(request) }));
      set.status = 201;
      set.headers.etag = etagOf(created.version);
      return v4Resource(created);
    })
    .put('/data/resources/:tenantId/:objectType/:id', async ({ request, params, body, set }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const replaced = await cp.mutation(calls.of(request, params.tenantId), 'resources', 'replaceAtVersion', bodyWithPath(body, path));
      set.headers.etag = etagOf(replaced.version);
      return v4Resource(replaced);
    })
    .delete('/data/resources/:tenantId/:objectType/:id', async ({ request, params, set }) => {
      const ifMatch = versionTag(request, 'If-Match');
      await cp.mutation(calls.of(request, params.tenantId), 'resources', 'delete', { type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) });
      set.status = 204;
    });
}
