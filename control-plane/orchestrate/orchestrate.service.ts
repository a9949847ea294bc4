import type { AnsweringService } from '../chat/answering.ts';
import type { Db, Tx } from '../db/client.ts';
import { DomainError, NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import { RUN_EXECUTION } from '../temporal/workflow-contract.ts';
import type { WorkflowRunStatus, WorkflowsPort } from '../temporal/workflows.port.ts';
import type { Outbox } from '../outbox/outbox.service.ts';
import { EXAMPLE_WORKFLOWS } from './examples.ts';
import {
  closeExecution,
  countRunningExecutions,
  findDefinition,
  findExecution,
  insertExecution,
  listDefinitions,
  listExecutions,
  lockTenantStarts,
  upsertDefinition,
  writeSteps,
} from './orchestrate.repo.ts';
import type { Execution, ExecutionPlan, ExecutionState, StepState, WorkflowDefinition } from './orchestrate.schema.ts';
import { runStepOf } from './steps.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Decision } from '../capabilities/capabilities.schema.ts';
import type { ChatService } from '../chat/chat.service.ts';

/** Seconds a start refused at the concurrency limit is told to wait before trying again. */
const RETRY_START_AFTER_S = 5;

/** How long a synchronous execute waits for the run to finish before answering "still running". */
const SYNC_WAIT_MS = 10_000;

const CLOSED_STATE: Partial<Record<WorkflowRunStatus, ExecutionState>> = {
  cancelled: 'cancelled',
  terminated: 'cancelled',
  timed_out: 'timed_out',
  failed: 'failed',
};

export type OrchestrateService = ReturnType<typeof createOrchestrateService>;

/**
 * Workflow definitions and their executions. An execution is a row (what the API lists) plus a
 * Temporal workflow `exec-<id>` whose activities move the row along; reads reconcile a row that
 * still says `running` with the workflow's own status, so the API and the workflow UI agree.
 */
export function createOrchestrateService(deps: {
  db: Db;
  workflows?: WorkflowsPort;
  /** Where an execution's workflow start is written in the execution's transaction (control-plane/outbox). */
  outbox?: Pick<Outbox, 'enqueue' | 'dispatch'>;
  resources: ResourcesService;
  answering: Pick<AnsweringService, 'complete'>;
  /** Refuses a tenant without the `workflows.runtime` capability (403 naming it). */
  capabilities?: Pick<CapabilitiesService, 'require'>;
  /** The `ai.chat` capability and daily messages that an `ai_chat` step answers under, as chat does. */
  chat?: Pick<ChatService, 'allowance'>;
}) {
  const { db } = deps;
  const workflows = () => {
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    return deps.workflows;
  };

  const outbox = () => {
    if (!deps.outbox) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    return deps.outbox;
  };

  /** Writes the start of the execution's run in its transaction `tx`: the workflow outbox starts it once `tx` has committed, exactly once. */
  const queueRun = (tx: Tx, plan: ExecutionPlan, workflowKey: string) =>
    outbox().enqueue(tx, { workflowType: RUN_EXECUTION.type, workflowId: RUN_EXECUTION.workflowId(plan.executionId), workflowKey, args: [plan] });

  /**
   * Closes a `running` execution whose run Temporal already closed (a run ended without recording
   * it). While Temporal cannot be asked (away, or not answering in time) the record is answered as
   * it stands: a later read reconciles it.
   */
  async function reconcile(actor: Pick<Actor, 'tenantId'>, execution: Execution): Promise<Execution> {
    if (execution.state !== 'running') return execution;
    const status = await workflows()
      .status(RUN_EXECUTION.workflowId(execution.id))
      .catch(() => undefined);
    const closed = status && CLOSED_STATE[status];
    if (!closed) return execution;
    return db.inTenant(actor.tenantId, async (tx) => {
      const steps = execution.steps.map((s) => (s.state === 'completed' ? s : { ...s, state: 'cancelled' as const }));
      await closeExecution(tx, execution.id, { state: closed, steps, error: { message: `workflow ${status}` } });
      return (await findExecution(tx, execution.id))!;
    });
  }

  /** Sets one step's state and duration on a running execution; returns who started the execution. */
  async function recordStep(plan: ExecutionPlan, index: number, state: 'running' | 'completed', duration: number): Promise<string | null> {
    return db.inTenant(plan.tenantId, async (tx) => {
      const execution = await findExecution(tx, plan.executionId, true);
      if (!execution) throw new NotFoundError('execution');
      await writeSteps(tx, plan.executionId, execution.steps.map((s, i) => (i === index ? { ...s, state, duration } : s)));
      return execution.createdBy;
    });
  }

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

  async function get(actor: Actor, id: string): Promise<Execution> {
    const execution = await db.inTenant(actor.tenantId, (tx) => findExecution(tx, id));
    if (!execution) throw new NotFoundError('execution');
    const { createdBy: _createdBy, ...record } = execution;
    return reconcile(actor, record);
  }

  return {
    async listWorkflows(actor: Actor): Promise<WorkflowDefinition[]> {
      return db.inTenant(actor.tenantId, (tx) => listDefinitions(tx));
    },

    /** Gives a tenant the example workflows; idempotent. */
    async ensureExampleWorkflows(tenantId: string): Promise<void> {
      await db.inTenant(tenantId, async (tx) => {
        for (const definition of EXAMPLE_WORKFLOWS) await upsertDefinition(tx, definition);
      });
    },

    /** Starts an execution; unless `async`, waits a bounded time for it. `settled` tells which. */
    async execute(
      actor: Actor,
      request: { workflowId: string; input: Record<string, unknown>; metadata: Record<string, unknown>; async: boolean },
    ): Promise<{ execution: Execution; settled: boolean }> {
      const decision = await deps.capabilities?.require(actor.tenantId, 'workflows.runtime');
      const { execution, start } = await db.inTenant(actor.tenantId, async (tx) => {
        const definition = await findDefinition(tx, request.workflowId);
        if (!definition) throw new NotFoundError(`workflow "${request.workflowId}"`);
        await admit(tx, actor.tenantId, decision, definition);
        const steps: StepState[] = definition.steps.map((s) => ({ stepId: s.id, name: s.name, state: 'pending', duration: 0 }));
        const execution = await insertExecution(tx, {
          workflowId: definition.id,
          version: definition.version,
          input: request.input,
          metadata: request.metadata,
          steps,
          createdBy: actor.userId,
        });
        const plan: ExecutionPlan = { tenantId: actor.tenantId, executionId: execution.id, input: request.input, steps: definition.steps };
        return { execution, start: await queueRun(tx, plan, definition.id) };
      });
      await outbox().dispatch(start);
      if (request.async) return { execution, settled: false };
      const closed = await workflows().waitForClose(RUN_EXECUTION.workflowId(execution.id), SYNC_WAIT_MS);
      const current = await get(actor, execution.id);
      return { execution: current, settled: closed !== undefined && current.state !== 'running' };
    },

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

    get,

    async list(actor: Actor, filter: { workflowId?: string; state?: ExecutionState; limit: number; offset: number }) {
      return db.inTenant(actor.tenantId, (tx) => listExecutions(tx, filter));
    },

    /** Requests cancellation and waits briefly for the run to close; a finished execution is left as it is. */
    async cancel(actor: Actor, id: string): Promise<void> {
      const execution = await db.inTenant(actor.tenantId, (tx) => findExecution(tx, id));
      if (!execution) throw new NotFoundError('execution');
      if (execution.state !== 'running') return;
      await workflows().cancel(RUN_EXECUTION.workflowId(id));
      await workflows().waitForClose(RUN_EXECUTION.workflowId(id), 5_000);
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
