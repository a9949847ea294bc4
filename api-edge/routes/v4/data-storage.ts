import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions } from '../request-input.ts';

const FLAGS = new Set(['dryRun', 'rebuildSearch']);

/**
 * v4 data: a tenant's storage. Status and doctor are reads; provision answers 200 when its workflow
 * finished within the bounded wait (or for a dry run) and 202 while it is still running.
 */
export function v4StorageRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-storage' })
    .get('/data/resources/:tenantId/storage', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'storage', 'status', {}))
    .get('/data/resources/:tenantId/storage/doctor', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'storage', 'doctor', {}))
    .post('/data/resources/:tenantId/storage/provision', async ({ request, params, body, set }) => {
      const outcome = await cp.mutation(calls.of(request, params.tenantId), 'storage', 'provision', bodyAndQueryOptions(request, body, FLAGS));
      set.status = outcome.state === 'running' ? 202 : 200;
      return outcome;
    })
    .post('/data/resources/:tenantId/storage/sync-schema', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'storage', 'syncSchema', bodyAndQueryOptions(request, body, FLAGS)),
    );
}
