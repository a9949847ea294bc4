import { ExecuteInputSchema, ExecutionRefSchema, ListExecutionsInputSchema, ValidationError } from '../../../control-plane/contracts.ts';
import { jsonObjectBody, queryValue, untrustedQueryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';
import { v3Execution, V3ExecutionPageSchema, V3ExecutionSchema, V3WorkflowListSchema } from './shape.ts';

/** The seed's name for an execution in a path (the procedures call it `id`). */
const executionPath = { executionId: ExecutionRefSchema.shape.id };

/** v3 orchestrate: workflow definitions and their executions (run on Temporal). */
export const v3OrchestrateRoutes = [
  defineRoute({
    method: 'GET',
    path: '/orchestrate/workflows',
    procedure: 'orchestrate.listWorkflows',
    tenant: 'header',
    input: {},
    output: { 200: { description: 'The workflows', schema: V3WorkflowListSchema } },
    docs: { operationId: 'listWorkflows', summary: 'List workflow definitions', tag: 'Orchestrate' },
    sample: {},
    handler: async ({ call, procedure }) => {
      const workflows = await procedure.query(call(), {});
      return { data: workflows.map((w) => ({ ...w, steps: w.steps.map(({ id, name, type }) => ({ id, name, type })) })) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/orchestrate/workflows/:workflowId/execute',
    procedure: 'orchestrate.execute',
    tenant: 'header',
    input: {
      path: { workflowId: ExecuteInputSchema.shape.workflowId },
      body: { schema: ExecuteInputSchema.omit({ workflowId: true }), required: false },
    },
    output: {
      200: { description: 'The execution ended', schema: V3ExecutionSchema },
      202: { description: 'The execution is still running', schema: V3ExecutionSchema },
    },
    docs: {
      operationId: 'executeWorkflow',
      summary: 'Execute a workflow',
      tag: 'Orchestrate',
      description: "With `async` false (the default) the answer waits a bounded time for the execution to end. A start beyond the plan's concurrent executions (workflows.runtime `maxConcurrentExecutions`) is 429; a workflow with an `ai_chat` step is refused as chat is (403 without the `ai.chat` capability, 429 once the day's chat messages are spent), and each `ai_chat` step counts one message.",
    },
    sample: { params: { workflowId: 'project-briefing' }, body: { input: {}, async: true } },
    handler: async ({ params, body, set, call, procedure }) => {
      const fields = body === undefined || body === '' ? {} : jsonObjectBody(body);
      if (Object.hasOwn(fields, 'workflowId')) throw ValidationError.field('workflowId', 'is given by the path, not the body');
      // The body's fields as sent (`input`, `metadata`, `async`): the procedure refuses any other.
      const result = await procedure.mutation(call(), { ...fields, workflowId: params.workflowId });
      set.status = result.settled ? 200 : 202;
      return v3Execution(result.execution);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/orchestrate/executions/:executionId',
    procedure: 'orchestrate.get',
    tenant: 'header',
    input: { path: executionPath },
    output: { 200: { description: 'The execution', schema: V3ExecutionSchema } },
    docs: { operationId: 'getExecution', summary: 'Get an execution', tag: 'Orchestrate' },
    sample: { params: { executionId: NIL_ID } },
    handler: async ({ params, call, procedure }) => v3Execution(await procedure.query(call(), { id: params.executionId })),
  }),
  defineRoute({
    method: 'GET',
    path: '/orchestrate/executions',
    procedure: 'orchestrate.list',
    tenant: 'header',
    input: { query: ListExecutionsInputSchema.shape },
    output: { 200: { description: 'A page of executions', schema: V3ExecutionPageSchema } },
    docs: { operationId: 'listExecutions', summary: 'List executions', tag: 'Orchestrate' },
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const page = await procedure.query(call(), {
        workflowId: queryValue(params, 'workflowId'),
        state: untrustedQueryValue(params, 'state'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
      });
      return {
        data: page.items.map(({ id, workflowId, state, startedAt, completedAt }) => ({ id, workflowId, state, startedAt, completedAt })),
        total: page.total,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/orchestrate/executions/:executionId/cancel',
    procedure: 'orchestrate.cancel',
    tenant: 'header',
    input: { path: executionPath },
    output: { 204: { description: 'Cancelled' } },
    docs: {
      operationId: 'cancelExecution',
      summary: 'Cancel an execution',
      tag: 'Orchestrate',
      description: 'Cancelling an execution that already ended changes nothing.',
    },
    sample: { params: { executionId: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(), { id: params.executionId });
      set.status = 204;
    },
  }),
];
