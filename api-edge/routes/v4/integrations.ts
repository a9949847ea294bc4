import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { queryValue, untrustedQueryValue } from '../request-input.ts';

/** v4 integrations: a builder's readiness report of the tenant (`tenant_id`, else the caller's), its plan and workflows (`workflow_keys`, comma-separated). */
export function v4IntegrationRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-integrations' }).get('/integrations/builder/readiness', ({ request }) => {
    const params = new URL(request.url).searchParams;
    return cp.query(calls.of(request, queryValue(params, 'tenant_id')), 'runtime', 'readiness', { workflow_keys: untrustedQueryValue(params, 'workflow_keys') });
  });
}
