import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody, queryValue, tenantOption } from '../request-input.ts';

/**
 * v4 workflow runtime: a workflow's status and requests for an operator to bind one; the tenant
 * is `tenant_id` (query string, or the request's body), else the caller's.
 */
export function v4WorkflowRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-workflows' })
    .get('/workflows/runtime/:workflowKey/status', ({ request, params }) => {
      const tenantId = queryValue(new URL(request.url).searchParams, 'tenant_id');
      return cp.query(calls.of(request, tenantId), 'runtime', 'status', { workflowKey: params.workflowKey });
    })
    .post('/workflows/runtime-requests', async ({ request, body, set }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const outcome = await cp.mutation(calls.of(request, tenantId), 'runtime', 'request', jsonObjectBody(rest));
      set.status = outcome.created ? 201 : 200;
      return outcome.request;
    });
}
