import { ApplicationFailure, CancellationScope, isCancellation, proxyLocalActivities } from '@temporalio/workflow';
import type { StorageBackend, StorageChange } from '../../control-plane/storage/storage.schema.ts';
import type { Activities } from '../activities/index.ts';

/** Retries of a storage step; a missing tenant, an invalid request or an unavailable backend end it at once. */
export const STORAGE_STEP_RETRY = {
  maximumAttempts: 3,
  initialInterval: '1 second',
  nonRetryableErrorTypes: ['NotFoundError', 'ValidationError', 'StorageUnavailableError'],
};

/** For a tenant being created, which holds no data yet, each storage step is milliseconds of SQL: the worker runs it inside the workflow task. */
export const localStorageSteps = proxyLocalActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_STEP_RETRY });

/** The storage activities, local or queued, as a workflow's proxy provides them. */
export type StorageSteps = Pick<Activities, 'beginStorageProvisioning' | 'ensureStorageBackend' | 'failStorageProvisioning'>;

const messageOf = (error: unknown) => (error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error));

/**
 * Ensures `backends` in order, each by one idempotent step that records the backend `ready`. When
 * one cannot be provisioned, the reason is recorded on the backends not yet ready and a
 * non-retryable `StorageProvisioningFailed` is thrown; a cancellation is recorded and rethrown.
 */
export async function ensureStorageBackends(
  steps: StorageSteps,
  request: { tenantId: string; backends: StorageBackend[]; rebuildSearch: boolean },
): Promise<StorageChange[]> {
  const { tenantId, backends, rebuildSearch } = request;
  const changes: StorageChange[] = [];
  let reached = 0;
  let begun = false;
  try {
    await steps.beginStorageProvisioning({ tenantId, backends });
    begun = true;
    for (; reached < backends.length; reached++) {
      changes.push(...(await steps.ensureStorageBackend({ tenantId, backend: backends[reached]!, rebuildSearch })));
    }
  } catch (error) {
    const failed = begun ? backends[reached] : undefined;
    const message = isCancellation(error) ? 'provisioning was cancelled' : messageOf(error);
    await CancellationScope.nonCancellable(() => steps.failStorageProvisioning({ tenantId, backend: failed, pending: backends.slice(reached), error: message }));
    if (isCancellation(error)) throw error;
    throw ApplicationFailure.nonRetryable(`${failed ?? 'storage'} provisioning failed: ${message}`, 'StorageProvisioningFailed');
  }
  return changes;
}
