import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyWithPath, etagOf, idempotencyKeyOf, jsonQueryValue, queryValue, untrustedQueryValue, versionTag } from '../request-input.ts';

/** The tenant a vertical call names: `tenant_id` in the query string (the company tenant or the app's child tenant), else the caller's. */
const tenantOf = (request: Request) => queryValue(new URL(request.url).searchParams, 'tenant_id');

/**
 * v4 verticals: an enrolled app's surface by its key. `GET /verticals/{key}` is the enrollment,
 * the tenant its resources live in and that tenant's object types; `.../resources/{objectType}`
 * serves those resources as the data API does (lists, `ETag`, `If-None-Match`, `If-Match`,
 * `Idempotency-Key`).
 */
export function v4VerticalRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-verticals' })
    .get('/verticals/:key', ({ request, params }) => cp.query(calls.of(request, tenantOf(request)), 'verticals', 'get', { key: params.key }))
    .get('/verticals/:key/resources/:objectType', async ({ request, params }) => {
      const query = new URL(request.url).searchParams;
      const page = await cp.query(calls.of(request, tenantOf(request)), 'verticals', 'listResources', {
        key: params.key,
        type: params.objectType,
        page: untrustedQueryValue(query, 'page'),
        limit: queryValue(query, 'limit'),
        sort: queryValue(query, 'sort'),
        where: jsonQueryValue(query, 'where'),
        cursor: queryValue(query, 'cursor'),
      });
      return { data: page.items, total: page.total, page: page.page, limit: page.limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
    })
    .get('/verticals/:key/resources/:objectType/:id', async ({ request, params, set }) => {
      const resource = await cp.query(calls.of(request, tenantOf(request)), 'verticals', 'getResource', { key: params.key, type: params.objectType, id: params.id });
      set.headers.etag = etagOf(resource.version);
      const cached = versionTag(request, 'If-None-Match');
      if (cached === '*' || cached === resource.version) {
        set.status = 304;
        return;
      }
      return resource;
    })
    .post('/verticals/:key/resources/:objectType', async ({ request, params, body, set }) => {
      const path = { key: params.key, type: params.objectType, ...idempotencyKeyOf(request) };
      const created = await cp.mutation(calls.of(request, tenantOf(request)), 'verticals', 'createResource', bodyWithPath(body, path));
      set.status = 201;
      set.headers.etag = etagOf(created.version);
      return created;
    })
    .put('/verticals/:key/resources/:objectType/:id', async ({ request, params, body, set }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { key: params.key, type: params.objectType, id: params.id, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const replaced = await cp.mutation(calls.of(request, tenantOf(request)), 'verticals', 'replaceResource', bodyWithPath(body, path));
      set.headers.etag = etagOf(replaced.version);
      return replaced;
    })
    .delete('/verticals/:key/resources/:objectType/:id', async ({ request, params, set }) => {
      const ifMatch = versionTag(request, 'If-Match');
      await cp.mutation(calls.of(request, tenantOf(request)), 'verticals', 'deleteResource', {
        key: params.key,
        type: params.objectType,
        id: params.id,
        ...(ifMatch === undefined ? {} : { ifMatch }),
      });
      set.status = 204;
    });
}
