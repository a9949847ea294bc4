import { RuntimeRequestInputSchema, RuntimeRequestSchema, WorkflowStatusInputSchema, WorkflowStatusSchema } from '../../../control-plane/contracts.ts';
import { tenantField, tenantQuery } from '../params.ts';
import { jsonObjectBody, queryValue, tenantOption } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/**
 * v4 workflow runtime: a workflow's status and requests for an operator to bind one; the tenant
 * is `tenant_id` (query string, or the request's body), else the caller's.
 */
export const v4WorkflowRoutes = [
  defineRoute({
    method: 'GET',
    path: '/workflows/runtime/:workflowKey/status',
    procedure: 'runtime.status',
    tenant: 'query',
    input: { path: { workflowKey: WorkflowStatusInputSchema.shape.workflowKey }, query: tenantQuery },
    output: { 200: { description: "The workflow's runtime status", schema: WorkflowStatusSchema } },
    docs: {
      operationId: 'workflowRuntimeStatus',
      summary: 'Whether a workflow has an executable runtime binding now',
      tag: 'Workflows',
      description: 'One of `available`, `operator_required`, `paid_upgrade_required`, `rate_limited`, `blocked`, `unsupported`, with the reason.',
    },
    sample: { params: { workflowKey: 'route-case' } },
    handler: ({ request, params, call, procedure }) => {
      const tenantId = queryValue(new URL(request.url).searchParams, 'tenant_id');
      return procedure.query(call(tenantId), { workflowKey: params.workflowKey });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/runtime-requests',
    procedure: 'runtime.request',
    tenant: 'query',
    input: { query: tenantQuery, body: { schema: RuntimeRequestInputSchema.extend(tenantField) } },
    output: {
      201: { description: 'The request, recorded', schema: RuntimeRequestSchema },
      200: { description: "The workflow's open request", schema: RuntimeRequestSchema },
    },
    docs: {
      operationId: 'requestWorkflowRuntime',
      summary: 'Ask an operator to bind a workflow to an AI runtime',
      tag: 'Workflows',
      description: 'A workflow has one open request: asking again answers it (200) rather than recording another (201).',
    },
    sample: { body: { workflow_key: 'route-case', reason: 'route case' } },
    handler: async ({ request, body, set, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const outcome = await procedure.mutation(call(tenantId), jsonObjectBody(rest));
      set.status = outcome.created ? 201 : 200;
      return outcome.request;
    },
  }),
];
