import type { Client } from '@temporalio/client';
import { PROVISION_STORAGE, PROVISION_TENANT } from '../../control-plane/temporal/workflow-contract.ts';

/** Where one tenant's provisioning spent its time, from the histories of its two workflows, in ms. */
export interface ProvisionHistory {
  /** From the provisioning workflow's start to its completion. */
  totalMs: number;
  /** Workflow tasks waiting for the worker (scheduled to started). */
  workflowTaskQueueMs: number;
  /** Workflow tasks running on the worker (started to completed). */
  workflowTaskRunMs: number;
  /** Activities waiting for the worker (scheduled to started). */
  activityQueueMs: number;
  /** Activities running, per activity (`ensureStorageBackend(blob)` per backend). */
  activityRunMs: Map<string, number>;
  /** From initiating the storage child workflow to its start. */
  childStartMs: number;
  /** Activity attempts after the first. */
  retries: number;
  /** Local activities run inside workflow tasks (recorded as markers). */
  localActivities: number;
}

interface HistoryEvent {
  eventId?: unknown;
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  [attributes: string]: unknown;
}

const millis = (event: HistoryEvent | undefined) => (event?.eventTime ? Number(event.eventTime.seconds) * 1000 + (event.eventTime.nanos ?? 0) / 1e6 : Number.NaN);
const attrs = (event: HistoryEvent, name: string) => event[name] as Record<string, unknown> | null | undefined;

function activityName(scheduled: Record<string, unknown>): string {
  const type = (scheduled.activityType as { name?: string } | undefined)?.name ?? 'activity';
  if (type !== 'ensureStorageBackend') return type;
  try {
    const payload = (scheduled.input as { payloads?: Array<{ data?: Uint8Array }> } | undefined)?.payloads?.[0]?.data;
    return `${type}(${(JSON.parse(Buffer.from(payload!).toString('utf8')) as { backend: string }).backend})`;
  } catch {
    return type;
  }
}

const CHILD_CLOSED = [
  'childWorkflowExecutionCompletedEventAttributes',
  'childWorkflowExecutionFailedEventAttributes',
  'childWorkflowExecutionCanceledEventAttributes',
  'childWorkflowExecutionTimedOutEventAttributes',
  'childWorkflowExecutionTerminatedEventAttributes',
];

/**
 * Adds one workflow's history to `into`. Workflow tasks the parent runs while its child runs
 * (after the child's start is recorded) overlap the child's own time and are left out.
 */
function addHistory(events: HistoryEvent[], into: ProvisionHistory): void {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const at = (id: unknown) => millis(byId.get(Number(id)));
  const overlapping = new Set<number>();
  let childRunning = false;
  for (const event of events) {
    const t = millis(event);
    if (attrs(event, 'childWorkflowExecutionStartedEventAttributes')) childRunning = true;
    if (CHILD_CLOSED.some((name) => attrs(event, name))) childRunning = false;
    if (childRunning && attrs(event, 'workflowTaskScheduledEventAttributes')) overlapping.add(Number(event.eventId));
    const wtStarted = attrs(event, 'workflowTaskStartedEventAttributes');
    if (wtStarted && overlapping.has(Number(wtStarted.scheduledEventId))) overlapping.add(Number(event.eventId));
    else if (wtStarted) into.workflowTaskQueueMs += t - at(wtStarted.scheduledEventId);
    const wtCompleted = attrs(event, 'workflowTaskCompletedEventAttributes');
    if (wtCompleted && !overlapping.has(Number(wtCompleted.startedEventId))) into.workflowTaskRunMs += t - at(wtCompleted.startedEventId);
    const started = attrs(event, 'activityTaskStartedEventAttributes');
    if (started) {
      into.activityQueueMs += t - at(started.scheduledEventId);
      into.retries += Math.max(0, Number(started.attempt ?? 1) - 1);
    }
    const finished = attrs(event, 'activityTaskCompletedEventAttributes') ?? attrs(event, 'activityTaskFailedEventAttributes');
    if (finished) {
      const scheduled = attrs(byId.get(Number(finished.scheduledEventId))!, 'activityTaskScheduledEventAttributes');
      const name = scheduled ? activityName(scheduled) : 'activity';
      into.activityRunMs.set(name, (into.activityRunMs.get(name) ?? 0) + t - at(finished.startedEventId));
    }
    if (attrs(event, 'markerRecordedEventAttributes')?.markerName === 'core_local_activity') into.localActivities++;
    const childStarted = attrs(event, 'childWorkflowExecutionStartedEventAttributes');
    if (childStarted) into.childStartMs += t - at(childStarted.initiatedEventId);
  }
}

/** The history of `tenant-<id>-provision`, and of its child `tenant-<id>-storage` when it started one (runs of earlier versions), broken down. */
export async function provisionHistory(client: Client, tenantId: string): Promise<ProvisionHistory> {
  const provision = (await client.workflow.getHandle(PROVISION_TENANT.workflowId(tenantId)).fetchHistory()).events as HistoryEvent[];
  const hasChild = provision.some((e) => attrs(e, 'childWorkflowExecutionStartedEventAttributes'));
  const storage = hasChild ? ((await client.workflow.getHandle(PROVISION_STORAGE.workflowId(tenantId)).fetchHistory()).events as HistoryEvent[]) : [];
  const history: ProvisionHistory = {
    totalMs: millis(provision.at(-1)) - millis(provision[0]),
    workflowTaskQueueMs: 0,
    workflowTaskRunMs: 0,
    activityQueueMs: 0,
    activityRunMs: new Map(),
    childStartMs: 0,
    retries: 0,
    localActivities: 0,
  };
  addHistory(provision, history);
  addHistory(storage, history);
  return history;
}
