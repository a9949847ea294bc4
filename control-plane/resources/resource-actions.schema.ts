import { z } from 'zod';
import { ResourceIdSchema, ResourceSchema, ResourceTypeNameSchema } from './resources.schema.ts';

/** An action declared on the resource's type, at the version named (optional), with input for its workflow (optional). */
export const ApplyActionInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    id: ResourceIdSchema,
    action: z.string().min(1).max(100),
    version: z.number().int().min(1).optional(),
    /** The version `If-Match` names (`*`: whatever is stored); it must agree with `version` when both are given. */
    ifMatch: z.union([z.number().int().min(1), z.literal('*')]).optional(),
    /** Given to the action's workflow beside `resource` and `action`. */
    input: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type ApplyActionInput = z.infer<typeof ApplyActionInputSchema>;

export const ActionResultSchema = z.object({
  resource: ResourceSchema,
  /** The execution the action started, when it starts a workflow. */
  executionId: z.string().optional(),
});
export type ActionResult = z.infer<typeof ActionResultSchema>;
