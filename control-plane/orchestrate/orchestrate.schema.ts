import { z } from 'zod';
import { LimitSchema, OffsetSchema } from '../query/paging.ts';

export const STEP_TYPES = ['resource_query', 'ai_chat', 'resource_create', 'delay'] as const;

/**
 * A typed step. `resource_query` runs a resources query (`config`: `type`, optional `filter`
 * as v3 `filter[...]` keys, `where`, `sort`, `limit`); `ai_chat` asks the platform's answering
 * service, as chat does (`config`: `prompt`, optional `systemPrompt`, `maxTokens`, `temperature`,
 * and `retrieval: true` to search the tenant's documents and resources too), with earlier steps'
 * output as context;
 * `resource_create` creates one resource (`config`: `type`, `data`) exactly once per execution,
 * however often the step is retried; `delay` waits on a durable timer (`config`: `ms`, up to a day).
 * String values `{{input.<path>}}` are replaced with the execution's input.
 */
export const StepDefinitionSchema = z.object({
  id: z.string().regex(/^[a-z0-9]+([-_][a-z0-9]+)*$/),
  name: z.string().min(1).max(200),
  type: z.enum(STEP_TYPES),
  config: z.record(z.string(), z.unknown()).default({}),
});
export type StepDefinition = z.infer<typeof StepDefinitionSchema>;

export const WorkflowDefinitionSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  version: z.string(),
  steps: z.array(StepDefinitionSchema).min(1),
});
export type WorkflowDefinition = z.infer<typeof WorkflowDefinitionSchema>;

export const EXECUTION_STATES = ['running', 'completed', 'failed', 'cancelled', 'timed_out'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export const StepStateSchema = z.object({
  stepId: z.string(),
  name: z.string(),
  state: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled']),
  /** Milliseconds; 0 until the step ends. */
  duration: z.number(),
});
export type StepState = z.infer<typeof StepStateSchema>;

export const ExecutionSchema = z.object({
  id: z.string(),
  workflowId: z.string(),
  state: z.enum(EXECUTION_STATES),
  input: z.record(z.string(), z.unknown()),
  output: z.record(z.string(), z.unknown()).nullable(),
  error: z.object({ message: z.string() }).nullable(),
  metadata: z.record(z.string(), z.unknown()),
  steps: z.array(StepStateSchema),
  startedAt: z.string(),
  completedAt: z.string().nullable(),
});
export type Execution = z.infer<typeof ExecutionSchema>;

export const ExecutionRefSchema = z.object({ id: z.string().min(1) });

/** v3 execute: the path's `workflowId` and the body's fields as sent (any other is refused). */
export const ExecuteInputSchema = z
  .object({
    workflowId: z.string().min(1).max(100),
    input: z.record(z.string(), z.unknown()).default({}),
    metadata: z.record(z.string(), z.unknown()).default({}),
    async: z.boolean().default(false),
  })
  .strict();

/** An execution, and whether it ended within the bounded wait (200) or still runs (202). */
export const ExecuteResultSchema = z.object({ execution: ExecutionSchema, settled: z.boolean() });

export const ListExecutionsInputSchema = z.object({
  workflowId: z.string().max(100).optional(),
  state: z.enum(EXECUTION_STATES).optional(),
  limit: LimitSchema,
  offset: OffsetSchema.default(0),
});

export const ExecutionPageSchema = z.object({ items: z.array(ExecutionSchema), total: z.number().int() });

/** What the execution workflow receives: a snapshot of the definition, so later edits do not change a run. */
export interface ExecutionPlan {
  tenantId: string;
  executionId: string;
  input: Record<string, unknown>;
  steps: StepDefinition[];
}
