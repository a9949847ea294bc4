import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Decision } from '../capabilities/capabilities.schema.ts';
import type { ChatService } from '../chat/chat.service.ts';
import type { Tx } from '../db/client.ts';
import { DomainError, NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { Outbox } from '../outbox/outbox.service.ts';
import { RUN_EXECUTION } from '../temporal/workflow-contract.ts';
import { countRunningExecutions, findDefinition, insertExecution, lockTenantStarts } from './orchestrate.repo.ts';
import type { ExecutionPlan, StepState, WorkflowDefinition } from './orchestrate.schema.ts';

/** Seconds a start refused at the concurrency limit is told to wait before trying again. */
const RETRY_START_AFTER_S = 5;

/**
 * Executions recorded in a caller's transaction, within the tenant's limits, with their run's
 * start written to the workflow outbox in that same transaction.
 */
export function createExecutionStarts(deps: {
  /** Where an execution's workflow start is written in the execution's transaction (control-plane/outbox). */
  outbox?: Pick<Outbox, 'enqueue' | 'dispatch'>;
  /** Refuses a tenant without the `workflows.runtime` capability (403 naming it). */
  capabilities?: Pick<CapabilitiesService, 'require'>;
  /** The `ai.chat` capability and daily messages that an `ai_chat` step answers under, as chat does. */
  chat?: Pick<ChatService, 'allowance'>;
}) {
  const outbox = () => {
    if (!deps.outbox) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    return deps.outbox;
  };

  /** Writes the start of the execution's run in its transaction `tx`: the workflow outbox starts it once `tx` has committed, exactly once. */
  const queueRun = (tx: Tx, plan: ExecutionPlan, workflowKey: string) =>
    outbox().enqueue(tx, { workflowType: RUN_EXECUTION.type, workflowId: RUN_EXECUTION.workflowId(plan.executionId), workflowKey, args: [plan] });

  /**
   * In the start's transaction: refuses (429) a start beyond the tenant's `maxConcurrentExecutions`
   * (workflows.runtime), and a workflow with an `ai_chat` step when the tenant may not chat or has
   * spent today's messages (403, 429; counted only when the step answers).
   */
  async function admit(tx: Tx, tenantId: string, decision: Decision | undefined, definition: WorkflowDefinition): Promise<void> {
    if (definition.steps.some((s) => s.type === 'ai_chat')) await deps.chat?.allowance(tenantId, { charge: false });
    const max = decision?.limits.maxConcurrentExecutions;
    if (max === undefined) return;
    await lockTenantStarts(tx);
    if ((await countRunningExecutions(tx)) >= max) {
      throw new RateLimitError(
        RETRY_START_AFTER_S,
        `capability workflows.runtime allows ${max} concurrent executions for this tenant; wait for one to finish or cancel one`,
      );
    }
  }

  return {
    outbox,
    queueRun,
    admit,

    /**
     * Records an execution in the caller's transaction `tx` (of the actor's tenant; 404 for an
     * unknown workflow) and returns its id with `start`, to be called once that transaction has
     * committed: no run starts for a transaction that rolled back, and one that committed always
     * starts (the workflow outbox tries again while the engine refuses); `start` itself does not
     * throw. Starting twice starts one run.
     */
    async prepareExecution(
      tx: Tx,
      actor: Actor,
      request: { workflowId: string; input: Record<string, unknown>; metadata: Record<string, unknown> },
    ): Promise<{ executionId: string; start: () => Promise<void> }> {
      const decision = await deps.capabilities?.require(actor.tenantId, 'workflows.runtime');
      const definition = await findDefinition(tx, request.workflowId);
      if (!definition) throw new NotFoundError(`workflow "${request.workflowId}"`);
      await admit(tx, actor.tenantId, decision, definition);
      const steps: StepState[] = definition.steps.map((s) => ({ stepId: s.id, name: s.name, state: 'pending', duration: 0 }));
      const execution = await insertExecution(tx, { workflowId: definition.id, version: definition.version, input: request.input, metadata: request.metadata, steps, createdBy: actor.userId });
      const plan: ExecutionPlan = { tenantId: actor.tenantId, executionId: execution.id, input: request.input, steps: definition.steps };
      const queued = await queueRun(tx, plan, definition.id);
      const start = () => outbox().dispatch(queued);
      return { executionId: execution.id, start };
    },
  };
}
