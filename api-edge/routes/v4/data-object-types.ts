import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody, tenantOption } from '../request-input.ts';

/**
 * v4 object types of a tenant: named by `tenant_id` in the query string or body, else the
 * caller's active tenant; and a tenant's published types by the tenant in the path.
 */
export function v4ObjectTypeRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-object-types' })
    .get('/data/resources/object-types', async ({ request }) => {
      const { tenantId } = tenantOption(request, undefined);
      return { data: (await cp.query(calls.of(request, tenantId), 'objectTypes', 'list', undefined)).items };
    })
    .post('/data/resources/object-types', async ({ request, body, set }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const created = await cp.mutation(calls.of(request, tenantId), 'objectTypes', 'create', jsonObjectBody(rest));
      set.status = 201;
      return created;
    })
    .patch('/data/resources/object-types/:objectTypeId', async ({ request, params, body }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return cp.mutation(calls.of(request, tenantId), 'objectTypes', 'update', { objectTypeId: params.objectTypeId, changes: jsonObjectBody(rest) });
    })
    .get('/data/resources/schema/:tenantId', async ({ request, params }) => ({
      data: (await cp.query(calls.of(request, params.tenantId), 'objectTypes', 'published', undefined)).items,
    }));
}
