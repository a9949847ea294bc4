import { Client, Connection, isGrpcServiceError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { ServiceUnavailableError } from '../errors.ts';
import { workflowStarts } from '../telemetry/metrics.ts';
import { activeTrace } from '../telemetry/trace-context.ts';
import { TENANT_ID, WORKFLOW_KEY } from './workflow-contract.ts';
import type { WorkflowRunStatus, WorkflowsPort } from './workflows.port.ts';

export { TENANT_ID, WORKFLOW_KEY } from './workflow-contract.ts';

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** Usually `DEFAULT_TASK_QUEUE` of the workflow contract. */
  taskQueue: string;
}

const STATUS: Record<string, WorkflowRunStatus> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  CONTINUED_AS_NEW: 'continued_as_new',
};

/** How long asking for a run's status may take: a caller that cannot wait longer has an answer of its own (the recorded state). */
const STATUS_DEADLINE_MS = 2_000;

/** How long a start or a cancel a request waits on may take before the caller is told to retry. */
const CALL_DEADLINE_MS = 5_000;

/** How long closing waits for calls given up on at their deadline to end. */
const CLOSE_WAIT_MS = 10_000;

/** gRPC status codes of a server that is away or did not answer: UNAVAILABLE and DEADLINE_EXCEEDED. */
const UNREACHABLE_CODES = new Set([14, 4]);

/** Temporal could not be reached, or did not answer within a deadline of ours. */
class TemporalUnreachable extends Error {}

/** Whether `error` says Temporal is away (rather than that the call itself was wrong). */
function isUnreachable(error: unknown): boolean {
  if (error instanceof TemporalUnreachable) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return [error, cause].some((e) => isGrpcServiceError(e) && UNREACHABLE_CODES.has(e.code));
}

/**
 * Runs a call a request waits on: one that takes longer than `deadlineMs` (the connection
 * included), or meets a Temporal that is away, is a 503 with `Retry-After` that names the workflow
 * engine, so the caller retries rather than hangs or reads an internal error.
 */
async function withinDeadline<T>(what: string, deadlineMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // Past the deadline the call is cancelled too, so that its retries stop rather than outlive it.
  const cancel = new AbortController();
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => {
        cancel.abort();
        reject(new TemporalUnreachable(`Temporal did not ${what} within ${deadlineMs} ms`));
      }, deadlineMs)),
  );
  const called = call(cancel.signal);
  called.catch(() => {});
  try {
    return await Promise.race([called, late]);
  } catch (error) {
    if (isUnreachable(error)) throw new ServiceUnavailableError('the workflow engine is unavailable for a moment: retry shortly', 2);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The innermost message of a workflow failure: what the workflow or its activity reported. */
function failureMessage(error: unknown): string {
  let current = error as { message?: string; cause?: unknown } | undefined;
  while (current?.cause && typeof current.cause === 'object') current = current.cause;
  return current?.message ?? String(error);
}

/** The workflows port on a Temporal server; connects on first use. */
export function createTemporalWorkflows(settings: TemporalSettings): WorkflowsPort & { close(): Promise<void> } {
  let client: Promise<Client> | undefined;
  const connect = () =>
    (client ??= Connection.connect({ address: settings.address })
      .then((connection) => new Client({ connection, namespace: settings.namespace }))
      .catch((error) => {
        client = undefined;
        throw new TemporalUnreachable(`Temporal at ${settings.address} could not be reached`, { cause: error });
      }));

  // Calls given up on at their deadline end at their next retry (the client's retries wait on
  // timers of their own): closing waits for them, since a retry on a closed channel throws.
  const givenUp = new Set<Promise<unknown>>();

  /** `call` on the connected client within `deadlineMs`, cancelled (with its retries) past it. */
  const bounded = <T>(what: string, deadlineMs: number, call: (temporal: Client) => Promise<T>) =>
    withinDeadline(what, deadlineMs, async (signal) => {
      const temporal = await connect();
      const called = temporal.connection.withAbortSignal(signal, () => call(temporal));
      const forget = (): void => void givenUp.delete(settled);
      const settled: Promise<void> = called.then(forget, forget);
      signal.addEventListener('abort', () => givenUp.add(settled), { once: true });
      return called;
    });

  async function status(workflowId: string): Promise<WorkflowRunStatus | undefined> {
    try {
      const description = await bounded(`describe ${workflowId}`, STATUS_DEADLINE_MS, (temporal) => temporal.workflow.getHandle(workflowId).describe());
      return STATUS[description.status.name] ?? 'running';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }

  /** A run's handle, once connected (a request waiting on the connection is told to retry after the deadline). */
  const handleOf = (workflowId: string) => withinDeadline(`connect for ${workflowId}`, CALL_DEADLINE_MS, async () => (await connect()).workflow.getHandle(workflowId));

  return {
    taskQueue: settings.taskQueue,

    // The memo keeps the request id and traceparent of the call that started the run (when one
    // did): the Temporal UI and `describe()` show them beside the run.
    async start(workflowType, options) {
      const trace = activeTrace();
      try {
        await bounded(`start ${options.workflowId}`, CALL_DEADLINE_MS, (temporal) => temporal.workflow.start(workflowType, {
          taskQueue: settings.taskQueue,
          workflowId: options.workflowId,
          args: options.args,
          ...(options.once ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
          typedSearchAttributes: [
            { key: TENANT_ID, value: options.tenantId },
            { key: WORKFLOW_KEY, value: options.workflowKey },
          ],
          ...(trace.requestId || trace.traceparent ? { memo: { ...trace } } : {}),
        }));
        workflowStarts.inc({ workflow: workflowType, outcome: 'started' });
        return 'started';
      } catch (error) {
        const already = error instanceof WorkflowExecutionAlreadyStartedError;
        workflowStarts.inc({ workflow: workflowType, outcome: already ? 'already_started' : 'failed' });
        if (!already) throw error;
        return 'already_started';
      }
    },

    async waitForClose(workflowId, timeoutMs) {
      const handle = await handleOf(workflowId);
      const closed = handle.result().then(
        () => true,
        () => true,
      );
      const timer = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
      return (await Promise.race([closed, timer])) ? status(workflowId) : undefined;
    },

    async result<T>(workflowId: string, timeoutMs: number) {
      const handle = await handleOf(workflowId);
      const settled = handle.result().then(
        (value: T) => ({ value }),
        (error: unknown) => ({ error: failureMessage(error) }),
      );
      const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref());
      const outcome = await Promise.race([settled, timer]);
      if (!outcome) return undefined;
      return { status: (await status(workflowId)) ?? 'failed', ...outcome };
    },

    async cancel(workflowId) {
      try {
        await bounded(`cancel ${workflowId}`, CALL_DEADLINE_MS, (temporal) => temporal.workflow.getHandle(workflowId).cancel());
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    },

    status,

    async close() {
      await Promise.race([Promise.allSettled([...givenUp]), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
      // A connection still being made when the process stops may fail: there is nothing to close then.
      const connected = await client?.catch(() => undefined);
      await connected?.connection.close();
    },
  };
}
