import type { WorkflowType } from './workflow-contract.ts';

/** How services start and steer durable work, without knowing the workflow engine. */
export interface StartWorkflowOptions {
  /** Deterministic and meaningful (`exec-<id>`, `tenant-<id>-provision`; see workflow-contract.ts): starting twice is a no-op. */
  workflowId: string;
  args: unknown[];
  /** Recorded as search attributes, so operators can filter by them in the workflow UI. */
  tenantId: string;
  workflowKey: string;
  /** The id never runs twice: a start after its run closed is `already_started` too (executions; not a document's reused id). */
  once?: boolean;
}

export type WorkflowRunStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'continued_as_new';

export interface WorkflowOutcome<T> {
  status: WorkflowRunStatus;
  value?: T;
  error?: string;
}

export interface WorkflowsPort {
  /** The task queue runs start on: the workflow outbox dispatches only the starts written for it. */
  readonly taskQueue?: string;
  /** Starts `workflowType` unless a run with this id is still open: `already_started` then. */
  start(workflowType: WorkflowType, options: StartWorkflowOptions): Promise<'started' | 'already_started'>;
  /** Waits up to `timeoutMs` for the run to close; `undefined` when it is still running. */
  waitForClose(workflowId: string, timeoutMs: number): Promise<WorkflowRunStatus | undefined>;
  /**
   * Waits up to `timeoutMs` for the run to close: its status, its return value when it completed,
   * and the failure's message otherwise; `undefined` when it is still running.
   */
  result<T>(workflowId: string, timeoutMs: number): Promise<WorkflowOutcome<T> | undefined>;
  /** Requests cancellation; a closed or unknown run is left as it is. */
  cancel(workflowId: string): Promise<void>;
  /** The run's status, or `undefined` when there is no such run. */
  status(workflowId: string): Promise<WorkflowRunStatus | undefined>;
}
