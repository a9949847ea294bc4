import type { Context } from '@temporalio/activity';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { traceIdOf, withTrace, type TraceFields } from '../control-plane/contracts.ts';
import { TRACE_HEADER } from '../control-plane/temporal/workflow-contract.ts';

/** One line per activity run, for the worker's log (production: pino JSON on stderr). */
export interface ActivityLogEntry {
  activity: string;
  workflowId?: string;
  workflowType?: string;
  attempt: number;
  outcome: 'completed' | 'failed';
  durationMs: number;
  /** The request that started the run, when one did. */
  requestId?: string;
  traceId?: string;
  /** Set when the activity failed: its error's message. */
  error?: string;
}

export type ActivityLog = (entry: ActivityLogEntry) => void;

/** The trace the run's workflow put in the activity's headers (workers/workflows/trace-interceptors.ts). */
function traceOf(headers: Record<string, unknown>): TraceFields {
  const payload = headers[TRACE_HEADER];
  if (!payload) return {};
  try {
    const value = defaultPayloadConverter.fromPayload<TraceFields>(payload);
    return {
      ...(typeof value?.requestId === 'string' ? { requestId: value.requestId } : {}),
      ...(typeof value?.traceparent === 'string' ? { traceparent: value.traceparent } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * Activity interceptors: each activity runs in the trace of the request that started its run (so
 * the control-plane work it does, and the workflows it starts, carry that trace on), every line
 * of Temporal's activity logger carries its `traceId` and `requestId`, and `log` gets one line per
 * activity run with them.
 */
export function activityTraceInterceptors(log?: ActivityLog): ActivityInterceptorsFactory {
  return (ctx: Context) => {
    let trace: TraceFields = {};
    const attributes = () => ({ ...(trace.requestId ? { requestId: trace.requestId } : {}), ...(trace.traceparent ? { traceId: traceIdOf(trace.traceparent) } : {}) });
    return {
      inbound: {
        async execute(input, next) {
          trace = traceOf(input.headers);
          const started = performance.now();
          const { activityType, workflowExecution, workflowType, attempt } = ctx.info;
          const entry = (outcome: ActivityLogEntry['outcome'], error?: unknown): ActivityLogEntry => ({
            activity: activityType,
            ...(workflowExecution ? { workflowId: workflowExecution.workflowId } : {}),
            ...(workflowType ? { workflowType } : {}),
            attempt,
            outcome,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            ...attributes(),
            ...(error === undefined ? {} : { error: error instanceof Error ? error.message : String(error) }),
          });
          try {
            const result = await withTrace(trace, () => next(input));
            log?.(entry('completed'));
            return result;
          } catch (error) {
            log?.(entry('failed', error));
            throw error;
          }
        },
      },
      outbound: {
        getLogAttributes: (input, next) => next({ ...input, ...attributes() }),
      },
    };
  };
}
