import { z } from 'zod';

export const PLANS = ['free', 'team', 'enterprise'] as const;
export const PlanSchema = z.enum(PLANS);
export type Plan = z.infer<typeof PlanSchema>;

/** Numbers a plan grants with a capability (`maxExecutionsPerDay: 100`); absent means unlimited. */
export const LimitsSchema = z.record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9]{0,62}$/, 'must be a limit name such as maxFileBytes'), z.number().int().min(0));
export type Limits = z.infer<typeof LimitsSchema>;

export const CapabilitySchema = z.object({
  key: z.string(),
  description: z.string(),
  /** Per plan: whether it includes the capability, and its limits there. */
  plans: z.record(PlanSchema, z.object({ included: z.boolean(), limits: LimitsSchema })),
  /** Home regions where it is offered; absent: everywhere. */
  regions: z.array(z.string()).optional(),
});
export type Capability = z.infer<typeof CapabilitySchema>;

export const CatalogSchema = z.object({ plans: z.array(PlanSchema), items: z.array(CapabilitySchema) });

export const DecisionSchema = z.object({ allowed: z.boolean(), reason: z.string(), limits: LimitsSchema });
export type Decision = z.infer<typeof DecisionSchema>;

export const EvaluateInputSchema = z
  .object({
    /** Keys to decide; every capability of the catalog when omitted. */
    capabilities: z.array(z.string().min(1).max(100)).min(1).max(50).optional(),
    /** What the caller is about to do, when it narrows the decision: a region other than the tenant's home region. */
    context: z.object({ region: z.string().max(20).optional() }).strict().default({}),
  })
  .strict();
export type EvaluateInput = z.infer<typeof EvaluateInputSchema>;

export const EvaluationSchema = z.object({
  tenantId: z.string(),
  plan: PlanSchema,
  decisions: z.record(z.string(), DecisionSchema),
});
export type Evaluation = z.infer<typeof EvaluationSchema>;

export const OverrideInputSchema = z
  .object({
    tenantId: z.string().min(1),
    capability: z.string().min(1).max(100),
    allowed: z.boolean(),
    limits: LimitsSchema.default({}),
    reason: z.string().trim().min(1, 'is required').max(500),
  })
  .strict();
export type OverrideInput = z.infer<typeof OverrideInputSchema>;

export const OverrideSchema = z.object({
  tenantId: z.string(),
  capability: z.string(),
  allowed: z.boolean(),
  limits: LimitsSchema,
  reason: z.string(),
  setBy: z.string().nullable(),
  setAt: z.string(),
});
export type Override = z.infer<typeof OverrideSchema>;

export const OverrideRefSchema = z.object({ tenantId: z.string().min(1), capability: z.string().min(1).max(100) }).strict();

export const SetPlanInputSchema = z.object({ tenantId: z.string().min(1), plan: PlanSchema }).strict();
export const TenantPlanSchema = z.object({ tenantId: z.string(), plan: PlanSchema, fromTemplate: z.boolean() });
