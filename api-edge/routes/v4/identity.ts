import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody } from '../v3/shape.ts';

const optionalBody = (body: unknown) => (body === undefined || body === '' ? {} : jsonObjectBody(body));

/** v4 identity: the caller's own record and profile, their tenant memberships, and self-provisioning. */
export function v4IdentityRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-identity' })
    .get('/identity/me', ({ request }) => cp.query(calls.of(request), 'identity', 'me', {}))
    .patch('/identity/me/profile', ({ request, body }) =>
      cp.mutation(calls.of(request), 'identity', 'updateProfile', jsonObjectBody(body) as never),
    )
    .get('/identity/tenants', async ({ request }) => ({ data: await cp.query(calls.of(request), 'identity', 'tenants', {}) }))
    .post('/identity/me/provision', async ({ request, body, set }) => {
      const tenantId = optionalBody(body).tenant_id ?? new URL(request.url).searchParams.get('tenant_id') ?? undefined;
      const grant = await cp.mutation(calls.of(request), 'identity', 'provision', { tenant_id: tenantId as string });
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    });
}
