import type { AnsweringService } from '../chat/answering.ts';
import type { ChatService } from '../chat/chat.service.ts';
import type { Db } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import { systemActor } from '../identity/system-actor.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import { EXAMPLE_WORKFLOWS } from './examples.ts';
import { closeExecution, findExecution, upsertDefinition, writeSteps } from './orchestrate.repo.ts';
import type { ExecutionPlan, ExecutionState, StepState } from './orchestrate.schema.ts';
import { runStepOf } from './steps.ts';

export type OrchestrateJobs = ReturnType<typeof createOrchestrateJobs>;

/**
 * What workflows' activities call on orchestrate: an execution's steps run and recorded on its
 * row, the row closed at the end, and a new tenant's example workflows.
 */
export function createOrchestrateJobs(deps: {
  db: Db;
  resources: ResourcesService;
  answering: Pick<AnsweringService, 'complete'>;
  /** The `ai.chat` capability and daily messages that an `ai_chat` step answers under, as chat does. */
  chat?: Pick<ChatService, 'allowance'>;
}) {
  const { db } = deps;

  /** Sets one step's state and duration on a running execution; returns who started the execution. */
  async function recordStep(plan: ExecutionPlan, index: number, state: 'running' | 'completed', duration: number): Promise<string | null> {
    return db.inTenant(plan.tenantId, async (tx) => {
      const execution = await findExecution(tx, plan.executionId, true);
      if (!execution) throw new NotFoundError('execution');
      await writeSteps(tx, plan.executionId, execution.steps.map((s, i) => (i === index ? { ...s, state, duration } : s)));
      return execution.createdBy;
    });
  }

  return {
    /** Gives a tenant the example workflows; idempotent. */
    async ensureExampleWorkflows(tenantId: string): Promise<void> {
      await db.inTenant(tenantId, async (tx) => {
        for (const definition of EXAMPLE_WORKFLOWS) await upsertDefinition(tx, definition);
      });
    },

    /** Activity: runs step `index` of a plan, recording its state and duration; safe to retry. */
    async runStep(plan: ExecutionPlan, index: number, outputs: Record<string, unknown>): Promise<Record<string, unknown>> {
      const createdBy = await recordStep(plan, index, 'running', 0);
      const actor = systemActor(plan.tenantId, { onBehalfOf: createdBy ?? undefined });
      const started = Date.now();
      const step = plan.steps[index]!;
      if (step.type === 'ai_chat') await deps.chat?.allowance(plan.tenantId, { charge: true, step: { executionId: plan.executionId, stepId: step.id } });
      const output = await runStepOf(deps, actor, step, plan.input, outputs, plan.executionId);
      await recordStep(plan, index, 'completed', Date.now() - started);
      return output;
    },

    /** Activity: records a step's state (for steps the workflow itself runs, such as a delay). */
    async recordStep(plan: ExecutionPlan, index: number, state: 'running' | 'completed', duration: number): Promise<void> {
      await recordStep(plan, index, state, duration);
    },

    /** Activity: closes the execution row with its final state; idempotent. */
    async finish(outcome: { tenantId: string; executionId: string; state: ExecutionState; output?: Record<string, unknown>; error?: string }): Promise<void> {
      await db.inTenant(outcome.tenantId, async (tx) => {
        const execution = await findExecution(tx, outcome.executionId, true);
        if (!execution) return;
        const stepEnd = outcome.state === 'completed' || outcome.state === 'failed' ? outcome.state : 'cancelled';
        const steps = execution.steps.map((s) => (s.state === 'completed' ? s : { ...s, state: stepEnd }));
        await closeExecution(tx, outcome.executionId, {
          state: outcome.state,
          steps: steps as StepState[],
          output: outcome.output,
          error: outcome.error ? { message: outcome.error } : undefined,
        });
      });
    },
  };
}
