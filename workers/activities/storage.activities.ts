import { Context } from '@temporalio/activity';
import type { StorageJobs } from '../../control-plane/contracts.ts';

/** How often a queued storage step tells Temporal it is alive; its heartbeat timeout is a few times this. */
export const STORAGE_HEARTBEAT_MS = 5_000;

/**
 * Runs `step` with the activity's cancellation signal, heartbeating while it runs when it is a
 * queued activity. A step may take minutes (an index built concurrently, every resource
 * projected), so its start-to-close timeout is long; the heartbeat lets Temporal retry one whose
 * worker went away after the heartbeat timeout instead, and brings the step its cancellation (a
 * cancelled workflow, or an attempt that timed out), which stops its statements in PostgreSQL.
 * Local activities cannot heartbeat, and their steps are short.
 */
async function heartbeating<T>(step: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  if (!context.info.isLocal) context.heartbeat();
  const timer = context.info.isLocal ? undefined : setInterval(() => context.heartbeat(), STORAGE_HEARTBEAT_MS);
  try {
    return await step(context.cancellationSignal);
  } catch (error) {
    // A statement cancelled because the step was: reported to Temporal as a cancellation, not a failure.
    if (context.cancellationSignal.aborted) await context.cancelled;
    throw error;
  } finally {
    clearInterval(timer);
  }
}

/** Storage provisioning steps, as activities over the storage service. */
export function createStorageActivities(deps: { storage: StorageJobs }) {
  const { storage } = deps;
  return {
    beginStorageProvisioning: storage.beginProvisioning,
    ensureStorageBackend: (request: Parameters<typeof storage.ensureBackend>[0]) => heartbeating((signal) => storage.ensureBackend(request, signal)),
    planStorageBackend: (request: Parameters<typeof storage.planBackend>[0]) => heartbeating((signal) => storage.planBackend(request, signal)),
    failStorageProvisioning: storage.failProvisioning,
  };
}
