import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyWithPath, optionalObject, tenantOption } from '../request-input.ts';

/**
 * v4 capabilities: the catalog per plan, a tenant's decisions (`tenant_id` in the body or query
 * string, else the caller's tenant), and what platform administrators set: a tenant's plan and
 * per-tenant overrides.
 */
export function v4CapabilityRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-platform-capabilities' })
    .get('/platform/capabilities/catalog', async ({ request }) => {
      const catalog = await cp.query(calls.of(request), 'capabilities', 'catalog', undefined);
      return { plans: catalog.plans, data: catalog.items };
    })
    .post('/platform/capabilities/evaluate', ({ request, body }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return cp.query(calls.of(request, tenantId), 'capabilities', 'evaluate', optionalObject(rest));
    })
    .put('/platform/capabilities/overrides/:tenantId/:capability', ({ request, params, body }) =>
      cp.mutation(calls.of(request), 'capabilities', 'setOverride', bodyWithPath(body, { tenantId: params.tenantId, capability: params.capability })),
    )
    .delete('/platform/capabilities/overrides/:tenantId/:capability', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request), 'capabilities', 'removeOverride', { tenantId: params.tenantId, capability: params.capability });
      set.status = 204;
    })
    .put('/platform/tenants/:tenantId/plan', ({ request, params, body }) =>
      cp.mutation(calls.of(request), 'capabilities', 'setPlan', bodyWithPath(body, { tenantId: params.tenantId })),
    );
}
