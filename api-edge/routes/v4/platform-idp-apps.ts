import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions } from '../request-input.ts';

/**
 * v4 identity-provider apps: the OAuth client of an enrolled app, created (201, with its secret
 * this once) or confirmed (200, no secret); and a new secret for it. `tenant_id` may be given in
 * the body or the query string.
 */
export function v4IdpAppRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-platform-idp-apps' })
    .post('/platform/provisioning/idp-apps', async ({ request, body, set }) => {
      const ensured = await cp.mutation(calls.of(request), 'idpApps', 'ensure', bodyAndQueryOptions(request, body));
      set.status = ensured.created ? 201 : 200;
      set.headers['cache-control'] = 'no-store';
      return ensured.app;
    })
    .post('/platform/provisioning/idp-apps/:clientId/rotate-secret', async ({ request, params, set }) => {
      const rotated = await cp.mutation(calls.of(request), 'idpApps', 'rotateSecret', { clientId: params.clientId });
      set.headers['cache-control'] = 'no-store';
      return rotated;
    });
}
