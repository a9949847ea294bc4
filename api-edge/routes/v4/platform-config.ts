import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, bodyWithPath } from '../request-input.ts';

/** The read's option, from the query string (`?include_secrets=true`). */
const GET_FLAGS = new Set(['include_secrets']);

/**
 * v4 configuration store: a tenant's sets (an app's label and an environment), a set's entries
 * (secrets' values with `include_secrets=true`, for tenant administrators), one key set (201 when
 * new) or removed (204), several keys set and removed together, and the audit of changes. No
 * answer is cached: it may hold secrets.
 */
export function v4ConfigRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-platform-config' })
    .onAfterHandle(({ set }) => {
      set.headers['cache-control'] = 'no-store';
    })
    .get('/platform/config/:tenantId', async ({ request, params }) => ({
      data: await cp.query(calls.of(request, params.tenantId), 'configStore', 'listSets', bodyAndQueryOptions(request, undefined)),
    }))
    .get('/platform/config/:tenantId/audit', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'configStore', 'audit', bodyAndQueryOptions(request, undefined)))
    .get('/platform/config/:tenantId/:label/:environment', ({ request, params }) =>
      cp.query(
        calls.of(request, params.tenantId),
        'configStore',
        'get',
        bodyWithPath(bodyAndQueryOptions(request, undefined, GET_FLAGS), { label: params.label, environment: params.environment }),
      ),
    )
    .patch('/platform/config/:tenantId/:label/:environment', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'configStore', 'write', bodyWithPath(body, { label: params.label, environment: params.environment })),
    )
    .put('/platform/config/:tenantId/:label/:environment/:key', async ({ request, params, body, set }) => {
      const outcome = await cp.mutation(
        calls.of(request, params.tenantId),
        'configStore',
        'put',
        bodyWithPath(body, { label: params.label, environment: params.environment, key: params.key }),
      );
      set.status = outcome.action === 'created' ? 201 : 200;
      return outcome.entry;
    })
    .delete('/platform/config/:tenantId/:label/:environment/:key', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'configStore', 'remove', { label: params.label, environment: params.environment, key: params.key });
      set.status = 204;
    });
}
