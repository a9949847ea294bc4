import { Elysia } from 'elysia';
import { ValidationError, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody, queryValue, untrustedQueryValue } from '../request-input.ts';
import { v3Execution } from './shape.ts';

/** v3 orchestrate: workflow definitions and their executions (run on Temporal). */
export function v3OrchestrateRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v3-orchestrate' })
    .get('/orchestrate/workflows', async ({ request }) => {
      const workflows = await cp.query(calls.of(request), 'orchestrate', 'listWorkflows', {});
      return { data: workflows.map((w) => ({ ...w, steps: w.steps.map(({ id, name, type }) => ({ id, name, type })) })) };
    })
    .post('/orchestrate/workflows/:workflowId/execute', async ({ request, params, body, set }) => {
      const fields = body === undefined || body === '' ? {} : jsonObjectBody(body);
      if (Object.hasOwn(fields, 'workflowId')) throw ValidationError.field('workflowId', 'is given by the path, not the body');
      // The body's fields as sent (`input`, `metadata`, `async`): the procedure refuses any other.
      const result = await cp.mutation(calls.of(request), 'orchestrate', 'execute', { ...fields, workflowId: params.workflowId });
      set.status = result.settled ? 200 : 202;
      return v3Execution(result.execution);
    })
    .get('/orchestrate/executions/:id', async ({ request, params }) =>
      v3Execution(await cp.query(calls.of(request), 'orchestrate', 'get', { id: params.id })),
    )
    .get('/orchestrate/executions', async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const page = await cp.query(calls.of(request), 'orchestrate', 'list', {
        workflowId: queryValue(params, 'workflowId'),
        state: untrustedQueryValue(params, 'state'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
      });
      return {
        data: page.items.map(({ id, workflowId, state, startedAt, completedAt }) => ({ id, workflowId, state, startedAt, completedAt })),
        total: page.total,
      };
    })
    .post('/orchestrate/executions/:id/cancel', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request), 'orchestrate', 'cancel', { id: params.id });
      set.status = 204;
    });
}
