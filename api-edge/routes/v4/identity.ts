import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, jsonObjectBody } from '../request-input.ts';

/** v4 identity: the caller's own record and profile, their tenant memberships, and self-provisioning. */
export function v4IdentityRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-identity' })
    .get('/identity/me', ({ request }) => cp.query(calls.of(request), 'identity', 'me', {}))
    .patch('/identity/me/profile', ({ request, body }) =>
      cp.mutation(calls.of(request), 'identity', 'updateProfile', jsonObjectBody(body)),
    )
    .get('/identity/tenants', async ({ request }) => ({ data: await cp.query(calls.of(request), 'identity', 'tenants', {}) }))
    .post('/identity/me/provision', async ({ request, body, set }) => {
      // `tenant_id` in the body or the query string; anything else is refused by the procedure.
      const grant = await cp.mutation(calls.of(request), 'identity', 'provision', bodyAndQueryOptions(request, body));
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    });
}
