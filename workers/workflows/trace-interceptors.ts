import { defaultPayloadConverter, workflowInfo, type ActivityInput, type LocalActivityInput, type Next, type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { TRACE_HEADER } from '../../control-plane/temporal/workflow-contract.ts';

/**
 * Workflow interceptors (registered with the workflow bundle): every activity a run schedules,
 * local or not, carries the trace its run was started under (the memo's `requestId` and
 * `traceparent`) in the `svc-trace` header, which workers/activity-trace.ts reads. Headers are
 * not part of what replay compares, so runs recorded before keep replaying.
 */
function withTraceHeader<T extends ActivityInput | LocalActivityInput>(input: T): T {
  const memo = workflowInfo().memo ?? {};
  const trace = {
    ...(typeof memo.requestId === 'string' ? { requestId: memo.requestId } : {}),
    ...(typeof memo.traceparent === 'string' ? { traceparent: memo.traceparent } : {}),
  };
  if (!Object.keys(trace).length) return input;
  return { ...input, headers: { ...input.headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload(trace) } };
}

class TraceHeaders implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next(withTraceHeader(input));
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return next(withTraceHeader(input));
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [new TraceHeaders()] });
