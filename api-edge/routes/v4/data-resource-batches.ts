import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { untrustedQueryValue } from '../request-input.ts';

/** v4 history of a tenant's resources of one type: the versions the engine recorded, newest first, by page. */
export function v4ResourceBatchRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-batches' })
    .get('/data/resources/:tenantId/:objectType/:id/history', async ({ request, params }) => {
      const query = new URL(request.url).searchParams;
      const history = await cp.query(calls.of(request, params.tenantId), 'resources', 'history', {
        type: params.objectType,
        id: params.id,
        page: untrustedQueryValue(query, 'page'),
        limit: untrustedQueryValue(query, 'limit'),
      });
      return { data: history.items, total: history.total, page: history.page, limit: history.limit, hasMore: history.hasMore };
    });
}
