import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody, untrustedQueryValue } from '../request-input.ts';

/**
 * v4 platform: tenants (root, children, bootstrap of a child's admin, soft delete), app
 * enrollments, and user lookups and grants. The tenant segment after `/platform/tenants/` is always `:tenantId` (the
 * router allows one parameter name per position); for the `children` routes it is the parent.
 */
export function v4PlatformRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-platform' })
    .post('/platform/tenants', async ({ request, body, set }) => {
      const tenant = await cp.mutation(calls.of(request), 'tenants', 'createRoot', jsonObjectBody(body));
      set.status = 201;
      return tenant;
    })
    .post('/platform/tenants/:tenantId/children', async ({ request, params, body, set }) => {
      const tenant = await cp.mutation(calls.of(request, params.tenantId), 'tenants', 'createChild', jsonObjectBody(body));
      set.status = 201;
      return tenant;
    })
    .post('/platform/tenants/:tenantId/children/:childId/bootstrap-admin', async ({ request, params, set }) => {
      const grant = await cp.mutation(calls.of(request, params.tenantId), 'tenants', 'bootstrapAdmin', { childId: params.childId });
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    })
    .post('/platform/tenants/:tenantId/apps', async ({ request, params, body, set }) => {
      const app = await cp.mutation(calls.of(request, params.tenantId), 'apps', 'create', jsonObjectBody(body));
      set.status = 201;
      return app;
    })
    .post('/platform/tenants/:tenantId/delete', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'tenants', 'delete', { tenantId: params.tenantId });
      set.status = 204;
    })
    .post('/platform/tenants/:tenantId/users/:oid/provision', async ({ request, params, set }) => {
      const grant = await cp.mutation(calls.of(request, params.tenantId), 'tenants', 'provisionUser', { userId: params.oid });
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    })
    .get('/platform/users/by-email', ({ request }) =>
      cp.query(calls.of(request), 'tenants', 'findUserByEmail', { email: untrustedQueryValue(new URL(request.url).searchParams, 'email') }),
    )
    .get('/platform/users/:oid/memberships', async ({ request, params }) => ({
      data: await cp.query(calls.of(request), 'tenants', 'memberships', { userId: params.oid }),
    }));
}
