import { z } from 'zod';
import { DecisionSchema, PlanSchema } from '../capabilities/capabilities.schema.ts';
import { RUNTIME_STATUSES, WorkflowRuntimeSchema } from '../chat/chat.schema.ts';

export { RUNTIME_STATUSES, WorkflowRuntimeSchema };

const WorkflowKeySchema = z.string({ error: 'is required' }).min(1, 'is required').max(100, 'must be at most 100 characters');

/** `GET /v4/workflows/runtime/{workflowKey}/status`. */
export const WorkflowStatusInputSchema = z.object({ workflowKey: WorkflowKeySchema }).strict();

export const WorkflowStatusSchema = WorkflowRuntimeSchema.extend({ tenantId: z.string() });

/** `POST /v4/workflows/runtime-requests` (the tenant is `tenant_id`, read by the edge). */
export const RuntimeRequestInputSchema = z
  .object({
    workflow_key: WorkflowKeySchema,
    /** Default: the workflow's display name, else its key. */
    display_name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
    reason: z.string().trim().max(2000).default(''),
  })
  .strict();
export type RuntimeRequestInput = z.infer<typeof RuntimeRequestInputSchema>;

export const RUNTIME_REQUEST_STATES = ['pending', 'approved', 'rejected'] as const;

export const RuntimeRequestSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  workflowKey: z.string(),
  displayName: z.string(),
  reason: z.string(),
  /** `pending` until an operator answers it. */
  state: z.enum(RUNTIME_REQUEST_STATES),
  requestedBy: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RuntimeRequest = z.infer<typeof RuntimeRequestSchema>;

/** A request, and whether this call recorded it (false: the workflow's open request already existed). */
export const RuntimeRequestOutcomeSchema = z.object({ request: RuntimeRequestSchema, created: z.boolean() });

/** `GET /v4/integrations/builder/readiness?workflow_keys=a,b` (default: every configured workflow). */
export const ReadinessInputSchema = z
  .object({
    workflow_keys: z
      .string()
      .max(5000)
      .transform((text) => [...new Set(text.split(',').map((key) => key.trim()).filter(Boolean))])
      .pipe(z.array(WorkflowKeySchema).max(50, 'must name at most 50 workflows'))
      .optional(),
  })
  .strict();

export const ReadinessSchema = z.object({
  tenant: z.object({ id: z.string(), slug: z.string(), name: z.string(), status: z.string(), homeRegion: z.string().nullable() }),
  plan: PlanSchema,
  /** Every capability's decision for the tenant. */
  capabilities: z.record(z.string(), DecisionSchema),
  workflows: z.array(WorkflowRuntimeSchema),
  /** The tenant is active and every workflow listed is `available`. */
  ready: z.boolean(),
});
export type Readiness = z.infer<typeof ReadinessSchema>;
