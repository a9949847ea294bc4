import { ReadinessInputSchema, ReadinessSchema } from '../../../control-plane/contracts.ts';
import { param, tenantQuery } from '../params.ts';
import { queryValue, untrustedQueryValue } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/** v4 integrations: a builder's readiness report of the tenant (`tenant_id`, else the caller's), its plan and workflows (`workflow_keys`, comma-separated). */
export const v4IntegrationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/integrations/builder/readiness',
    procedure: 'runtime.readiness',
    tenant: 'query',
    input: {
      query: { ...tenantQuery, workflow_keys: param(ReadinessInputSchema.shape.workflow_keys, { description: 'Comma-separated workflow keys; default: every configured workflow' }) },
    },
    output: { 200: { description: 'The readiness report', schema: ReadinessSchema } },
    docs: { operationId: 'builderReadiness', summary: 'Tenant, plan and workflow readiness for a builder', tag: 'Integrations' },
    sample: {},
    handler: ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      return procedure.query(call(queryValue(params, 'tenant_id')), { workflow_keys: untrustedQueryValue(params, 'workflow_keys') });
    },
  }),
];
