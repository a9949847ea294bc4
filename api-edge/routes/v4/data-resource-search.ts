import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody } from '../request-input.ts';

/**
 * v4 resource search: `POST .../{tenantId}/search` ranks the tenant's resources by their types'
 * `searchFields` projection. A static segment, so it wins over a create of a type named `search`
 * (a key no type may have).
 */
export function v4ResourceSearchRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-search' }).post('/data/resources/:tenantId/search', ({ request, params, body }) =>
    cp.query(calls.of(request, params.tenantId), 'search', 'resources', jsonObjectBody(body)),
  );
}
