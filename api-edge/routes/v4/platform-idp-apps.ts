import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, bodyWithPath } from '../request-input.ts';

/** A rotation's option, in the body or the query string (`?revokePrevious=true`). */
const ROTATE_FLAGS = new Set(['revokePrevious']);

/**
 * v4 identity-provider apps: the OAuth client of an enrolled app, created (201, with its secret
 * this once) or confirmed (200, no secret); and a new secret for it (the old one working for an
 * hour more, or not at all with `revokePrevious`). `tenant_id` may be given in
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
    .post('/platform/provisioning/idp-apps/:clientId/rotate-secret', async ({ request, params, body, set }) => {
      const options = bodyWithPath(bodyAndQueryOptions(request, body, ROTATE_FLAGS), { clientId: params.clientId });
      const rotated = await cp.mutation(calls.of(request), 'idpApps', 'rotateSecret', options);
      set.headers['cache-control'] = 'no-store';
      return rotated;
    });
}
