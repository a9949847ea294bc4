import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyWithPath, etagOf, jsonObjectBody, optionalObject, versionTag } from '../request-input.ts';

/**
 * v4 data beyond one resource: a query across a tenant's types, an aggregate of one type's
 * resources, and the actions declared on a type. `POST .../{tenantId}/query` is a static segment,
 * so it wins over a create of a type named `query` (a key no type may have).
 */
export function v4ResourceQueryRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-queries' })
    .post('/data/resources/:tenantId/query', async ({ request, params, body }) => {
      const page = await cp.query(calls.of(request, params.tenantId), 'resources', 'query', jsonObjectBody(body));
      return { data: page.items, total: page.total, hasMore: page.hasMore, nextCursor: page.nextCursor };
    })
    .post('/data/resources/:tenantId/:objectType/aggregate', async ({ request, params, body }) => {
      const result = await cp.query(calls.of(request, params.tenantId), 'resources', 'aggregate', bodyWithPath(body, { type: params.objectType }));
      return { data: result.items, hasMore: result.hasMore };
    })
    .post('/data/resources/:tenantId/:objectType/:id/actions/:action', async ({ request, params, body, set }) => {
      const ifMatch = versionTag(request, 'If-Match');
      const path = { type: params.objectType, id: params.id, action: params.action, ...(ifMatch === undefined ? {} : { ifMatch }) };
      const result = await cp.mutation(calls.of(request, params.tenantId), 'resources', 'applyAction', bodyWithPath(optionalObject(body), path));
      set.headers.etag = etagOf(result.resource.version);
      return result.executionId === undefined ? { resource: result.resource } : { resource: result.resource, executionId: result.executionId };
    });
}
