import { z } from 'zod';
import {
  CapabilitySchema,
  CatalogSchema,
  EvaluateInputSchema,
  EvaluationSchema,
  OverrideInputSchema,
  OverrideSchema,
  SetPlanInputSchema,
  TenantPlanSchema,
} from '../../../control-plane/contracts.ts';
import { tenantField, tenantPath, tenantQuery } from '../params.ts';
import { bodyWithPath, optionalObject, tenantOption } from '../request-input.ts';
import { defineRoute } from '../route.ts';

const overridePath = { ...tenantPath, capability: OverrideInputSchema.shape.capability };

/**
 * v4 capabilities: the catalog per plan, a tenant's decisions (`tenant_id` in the body or query
 * string, else the caller's tenant), and what platform administrators set: a tenant's plan and
 * per-tenant overrides.
 */
export const v4CapabilityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/platform/capabilities/catalog',
    procedure: 'capabilities.catalog',
    tenant: 'none',
    input: {},
    output: { 200: { description: 'The catalog', schema: CatalogSchema.omit({ items: true }).extend({ data: z.array(CapabilitySchema) }) } },
    docs: { operationId: 'capabilityCatalog', summary: 'Capabilities and what each plan includes', tag: 'Capabilities' },
    sample: {},
    handler: async ({ call, procedure }) => {
      const catalog = await procedure.query(call(), undefined);
      return { plans: catalog.plans, data: catalog.items };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/capabilities/evaluate',
    procedure: 'capabilities.evaluate',
    tenant: 'query',
    input: { query: tenantQuery, body: { schema: EvaluateInputSchema.extend(tenantField), required: false } },
    output: { 200: { description: 'A decision per capability', schema: EvaluationSchema } },
    docs: {
      operationId: 'evaluateCapabilities',
      summary: "Decide a tenant's capabilities",
      tag: 'Capabilities',
      description: "From the tenant's plan, home region and overrides; the tenant is `tenant_id` in the body or query string, else the caller's.",
    },
    sample: { body: { capabilities: ['workflows.runtime'] } },
    handler: ({ request, body, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return procedure.query(call(tenantId), optionalObject(rest));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/platform/capabilities/overrides/:tenantId/:capability',
    procedure: 'capabilities.setOverride',
    tenant: 'path',
    input: { path: overridePath, body: { schema: OverrideInputSchema.omit({ tenantId: true, capability: true }) } },
    output: { 200: { description: 'The override', schema: OverrideSchema } },
    docs: {
      operationId: 'setCapabilityOverride',
      summary: 'Allow or refuse a capability for one tenant (platform administrators)',
      tag: 'Capabilities',
    },
    sample: { params: { capability: 'geo' }, body: { allowed: true, reason: 'route case' } },
    handler: ({ params, body, call, procedure }) =>
      procedure.mutation(call(), bodyWithPath(body, { tenantId: params.tenantId, capability: params.capability })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/platform/capabilities/overrides/:tenantId/:capability',
    procedure: 'capabilities.removeOverride',
    tenant: 'path',
    input: { path: overridePath },
    output: { 204: { description: 'Removed' } },
    docs: { operationId: 'removeCapabilityOverride', summary: "Remove a tenant's override (platform administrators)", tag: 'Capabilities' },
    sample: { params: { capability: 'geo' } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(), { tenantId: params.tenantId, capability: params.capability });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/platform/tenants/:tenantId/plan',
    procedure: 'capabilities.setPlan',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: SetPlanInputSchema.omit({ tenantId: true }) } },
    output: { 200: { description: "The tenant's plan", schema: TenantPlanSchema } },
    docs: { operationId: 'setTenantPlan', summary: "Set a tenant's plan (platform administrators)", tag: 'Capabilities' },
    sample: { body: { plan: 'team' } },
    handler: ({ params, body, call, procedure }) => procedure.mutation(call(), bodyWithPath(body, { tenantId: params.tenantId })),
  }),
];
