import type { Db, Tx } from '../db/client.ts';
import { DomainError, ServiceUnavailableError } from '../errors.ts';
import type { WorkflowType } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import { claimOutboxRows, deleteOutboxRow, deleteTenantOutboxRows, insertOutboxRow, postponeOutboxRow, releaseOutboxRows, type OutboxRow } from './outbox.repo.ts';

/** A workflow to start once the transaction that wrote it commits. */
export interface OutboxStart {
  workflowType: WorkflowType;
  /** Deterministic (workflow-contract.ts): starting it twice starts one run. */
  workflowId: string;
  workflowKey: string;
  args: unknown[];
  /** The id is reused by later work of the same thing (a document's index run): an open run may be an earlier one's. */
  reusesId?: boolean;
  /** The tenant it runs for, when the transaction is a platform one (no tenant set). */
  tenantId?: string;
}

export interface OutboxOptions {
  /** How long after its commit a row waits for its writer to start it before any process may (default 10 s). */
  graceMs?: number;
  /** How long a claim keeps other processes off a row (default 30 s: longer than a start that waits for a previous run). */
  leaseMs?: number;
  /** How often the dispatcher looks for due rows (default 2 s). */
  pollMs?: number;
  /** Waits after failed starts, the last repeated (default 1 s, 5 s, 30 s, 2 min, 5 min). */
  backoffMs?: number[];
  /** How long `dispatch` waits for its start before returning (the start goes on; default 5 s). */
  dispatchWaitMs?: number;
  /** How long a start waits for the previous run of a reused id to close (default 20 s). */
  previousRunWaitMs?: number;
  log?: (message: string, detail?: unknown) => void;
}

export type Outbox = ReturnType<typeof createOutbox>;

const CLAIM_BATCH = 20;

/** A pool that has been closed: the dispatcher of a process that is stopping ends quietly. */
const isClosedPool = (error: unknown) => ['CONNECTION_ENDED', 'CONNECTION_DESTROYED'].includes((error as { code?: string } | null)?.code ?? '');

/**
 * The workflow outbox (docs/decisions/0146-workflow-outbox.md): a start is written in the same
 * transaction as the work it starts (a document job, an execution, an accepted webhook delivery, a
 * new tenant's provisioning),
 * so that a committed one is always started, and a rolled-back one never. The writer starts it at
 * once after the commit (`dispatch`); should that fail, or the process end first, the dispatcher of
 * any process on the same task queue claims the row once it is due (`FOR UPDATE SKIP LOCKED` and a
 * lease), starts it and removes it, trying again with backoff while the workflow engine refuses.
 * Every start carries its deterministic workflow id, so a start made twice (a process that ended
 * after starting, before removing the row) starts one run.
 */
export function createOutbox(deps: { db: Db; workflows?: WorkflowsPort } & OutboxOptions) {
  const { db } = deps;
  const graceMs = deps.graceMs ?? 10_000;
  const leaseMs = deps.leaseMs ?? 30_000;
  const backoffMs = deps.backoffMs ?? [1_000, 5_000, 30_000, 120_000, 300_000];
  const previousRunWaitMs = deps.previousRunWaitMs ?? 20_000;
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[outbox] ${message}`, detail ?? ''));

  const engine = () => {
    if (!deps.workflows?.taskQueue) throw new DomainError('INTERNAL_ERROR', 'the workflow engine is not configured');
    return deps.workflows as WorkflowsPort & { taskQueue: string };
  };

  // A process that cannot reach the engine claims nothing for a while (the backoff of its
  // consecutive failures), then one row at a time, and the row it failed is due again soon: the
  // rows go to processes that can start them rather than wait out its failures. A start that
  // fails for a reason of its own row backs that row off instead.
  let unreachableInARow = 0;
  let restUntil = 0;

  /** Starts a claimed row's run and removes the row; a failed start leaves it due after its backoff. */
  async function startRow(row: OutboxRow): Promise<'started' | 'failed' | 'unreachable'> {
    const workflows = engine();
    const start = () =>
      workflows.start(row.workflowType as WorkflowType, { workflowId: row.workflowId, args: row.args, tenantId: row.tenantId, workflowKey: row.workflowKey, once: !row.reusesId });
    try {
      if ((await start()) === 'already_started' && row.reusesId) {
        await workflows.waitForClose(row.workflowId, previousRunWaitMs);
        if ((await start()) === 'already_started') throw new Error(`the previous run of ${row.workflowId} did not end within ${previousRunWaitMs / 1000} s`);
      }
      await db.system((tx) => deleteOutboxRow(tx, row.id));
      unreachableInARow = 0;
      return 'started';
    } catch (error) {
      if (isClosedPool(error)) return 'failed';
      const unreachable = error instanceof ServiceUnavailableError;
      if (unreachable) restUntil = Date.now() + backoffMs[Math.min(unreachableInARow++, backoffMs.length - 1)]!;
      const delay = unreachable ? backoffMs[0]! : backoffMs[Math.min(row.attempts - 1, backoffMs.length - 1)]!;
      log(`starting ${row.workflowId} failed (attempt ${row.attempts}); trying again in ${delay / 1000} s`, error);
      await db.system((tx) => postponeOutboxRow(tx, row.id, delay, error instanceof Error ? error.message : String(error))).catch(() => {});
      return unreachable ? 'unreachable' : 'failed';
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<void> | undefined;

  /** Claims and starts the due rows of the queue, a batch at a time, until none is due. */
  async function dispatchDue(): Promise<number> {
    const { taskQueue } = engine();
    let started = 0;
    for (;;) {
      if (Date.now() < restUntil) return started;
      // While the engine is unreachable from here, one row at a time until a start succeeds again.
      const rows = await db.system((tx) => claimOutboxRows(tx, taskQueue, { limit: unreachableInARow ? 1 : CLAIM_BATCH, leaseMs }));
      for (const [index, row] of rows.entries()) {
        const outcome = await startRow(row);
        if (outcome === 'started') started++;
        if (outcome !== 'unreachable') continue;
        // The rest of the claim goes back at once, for a process that can start them.
        const untried = rows.slice(index + 1).map((r) => r.id);
        await db.system((tx) => releaseOutboxRows(tx, untried)).catch(() => {});
        return started;
      }
      if (rows.length < CLAIM_BATCH || unreachableInARow || stopped) return started;
    }
  }

  function schedule(): void {
    if (stopped) return;
    // Jitter, so that the processes of a deployment do not all look at the same moment.
    timer = setTimeout(() => {
      running = dispatchDue()
        .then(() => undefined)
        .catch((error: unknown) => {
          if (!isClosedPool(error)) log('dispatching the workflow outbox failed', error);
        })
        .finally(schedule);
    }, (deps.pollMs ?? 2_000) * (0.75 + Math.random() / 2));
    timer.unref();
  }

  return {
    /**
     * Writes the start of `start` in `tx`, a transaction of the tenant it runs for (or a platform
     * transaction naming `start.tenantId`); call `dispatch` with the answer once `tx` has committed.
     * Refuses (INTERNAL_ERROR) when no workflow engine is configured.
     */
    async enqueue(tx: Tx, start: OutboxStart): Promise<string> {
      return (await insertOutboxRow(tx, { taskQueue: engine().taskQueue, ...start, reusesId: start.reusesId ?? false, graceMs }))!;
    },

    /** As `enqueue`, unless a start of the same workflow id is waiting already: undefined then. */
    async enqueueUnlessWaiting(tx: Tx, start: OutboxStart): Promise<string | undefined> {
      return insertOutboxRow(tx, { taskQueue: engine().taskQueue, ...start, reusesId: start.reusesId ?? false, graceMs, unlessWaiting: true });
    },

    /**
     * Starts the row written by `enqueue` now, unless another process has claimed it: waits for the
     * start up to `dispatchWaitMs`, then leaves it to go on. Never throws: a start that fails is the
     * dispatcher's to try again.
     */
    async dispatch(id: string): Promise<void> {
      const attempt = (async () => {
        const [row] = await db.system((tx) => claimOutboxRows(tx, engine().taskQueue, { limit: 1, leaseMs, id }));
        if (row) await startRow(row);
      })().catch((error: unknown) => {
        if (!isClosedPool(error)) log(`starting outbox row ${id} failed; the dispatcher tries again`, error);
      });
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([attempt, new Promise<void>((resolve) => (wait = setTimeout(resolve, deps.dispatchWaitMs ?? 5_000)))]);
      clearTimeout(wait);
    },

    /**
     * Removes, in `tx` (a platform transaction deleting the tenant), every start still waiting for
     * `tenantId`: a deleted tenant's provisioning, jobs and executions never start after its
     * deletion commits. A start a process is making at that moment goes on; its run finds the
     * tenant deleted. Needs no workflow engine. Answers how many were removed.
     */
    dropStartsOf: (tx: Tx, tenantId: string): Promise<number> => deleteTenantOutboxRows(tx, tenantId),

    /** Claims and starts every due row of this process's queue now; answers how many (tests, operators). */
    dispatchDue,

    /** Starts the dispatcher of this process (a no-op without a workflow engine); `stop` ends it. */
    start(): void {
      if (!deps.workflows?.taskQueue || !stopped) return;
      stopped = false;
      schedule();
    },

    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
