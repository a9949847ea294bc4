import type { Db } from '../db/client.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { RUN_EXECUTION } from '../temporal/workflow-contract.ts';
import type { WorkflowRunStatus, WorkflowsPort } from '../temporal/workflows.port.ts';
import type { Outbox } from '../outbox/outbox.service.ts';
import { createExecutionStarts } from './execution-starts.ts';
import { closeExecution, findDefinition, findExecution, insertExecution, listDefinitions, listExecutions } from './orchestrate.repo.ts';
import type { Execution, ExecutionPlan, ExecutionState, StepState, WorkflowDefinition } from './orchestrate.schema.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { ChatService } from '../chat/chat.service.ts';

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
  /** Refuses a tenant without the `workflows.runtime` capability (403 naming it). */
  capabilities?: Pick<CapabilitiesService, 'require'>;
  /** The `ai.chat` capability and daily messages that a workflow with an `ai_chat` step starts under, as chat does. */
  chat?: Pick<ChatService, 'allowance'>;
}) {
  const { db } = deps;
  const workflows = () => {
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    return deps.workflows;
  };

  const starts = createExecutionStarts(deps);
  const { outbox, queueRun, admit } = starts;

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

    prepareExecution: starts.prepareExecution,

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

  };
}
