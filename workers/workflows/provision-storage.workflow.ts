import { ActivityCancellationType, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { STORAGE_BACKENDS } from '../../control-plane/storage/storage.constants.ts';
import { PROVISION_STORAGE } from '../../control-plane/temporal/workflow-contract.ts';
import type { ProvisionStorageRequest, ProvisionStorageResult, StorageBackend, StorageChange } from '../../control-plane/storage/storage.schema.ts';
import type { Activities } from '../activities/index.ts';
import { ensureStorageBackends, localStorageSteps, STORAGE_STEP_RETRY } from './storage-steps.ts';

/**
 * A tenant that holds data may need minutes per step (an index built concurrently, every resource
 * projected or re-projected for search): each step a task on the server's queue, with time to
 * finish. Ensuring and planning a backend heartbeat, so a step whose worker went away is retried
 * after 20 s rather than after its 10 minutes; recording progress or a failure is one statement,
 * retried after 30 s when its worker went away.
 */
const recordingSteps = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STORAGE_STEP_RETRY });
const backendStepOptions = { startToCloseTimeout: '10 minutes', heartbeatTimeout: '20 seconds', retry: STORAGE_STEP_RETRY } as const;
/** A cancelled backend step is waited for (it stops its statements at once) before the cancellation is recorded, so a late `ready` cannot follow it. */
const backendSteps = proxyActivities<Activities>({ ...backendStepOptions, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED });
const backendStepsNotWaitedFor = proxyActivities<Activities>(backendStepOptions);
const queuedSteps = (backend: typeof backendSteps) => ({
  beginStorageProvisioning: recordingSteps.beginStorageProvisioning,
  failStorageProvisioning: recordingSteps.failStorageProvisioning,
  ensureStorageBackend: backend.ensureStorageBackend,
  planStorageBackend: backend.planStorageBackend,
});

/**
 * Provisions a tenant's storage backends (`postgresql`, `documentdb`, `blob`, `search`, or `all`)
 * in that order, each by one idempotent activity that records the backend `ready`. A dry run only
 * lists what would change. Runs with workflow id `tenant-<tenantId>-storage`, started by the
 * storage routes, or as the child of a `provisionTenant` run started before that workflow
 * provisioned storage itself (then with local activities: the tenant is new). It fails
 * (non-retryable) when a backend cannot be provisioned, after recording the reason on the
 * backends not yet ready.
 */
export async function provisionStorage(request: ProvisionStorageRequest): Promise<ProvisionStorageResult> {
  const { tenantId, rebuildSearch } = request;
  // Run as the child of `provisionTenant`: the storage of a new tenant. Started by the storage routes: a tenant's existing data.
  const forNewTenant = workflowInfo().parent !== undefined && !rebuildSearch;
  // Histories recorded before the short steps ran locally lack the first marker, and replay with `queuedSteps`;
  // those recorded before cancelled backend steps were waited for lack the second, and replay without waiting.
  const steps =
    patched(PROVISION_STORAGE.localStepsPatch) && forNewTenant
      ? localStorageSteps
      : queuedSteps(patched(PROVISION_STORAGE.waitForCancelledStepsPatch) ? backendSteps : backendStepsNotWaitedFor);
  const backends: StorageBackend[] = request.backends ?? (request.backend === 'all' ? [...STORAGE_BACKENDS] : [request.backend]);
  if (request.dryRun) {
    const changes: StorageChange[] = [];
    for (const backend of backends) changes.push(...(await steps.planStorageBackend({ tenantId, backend, rebuildSearch })));
    return { tenantId, backends, dryRun: true, changes };
  }
  const changes = await ensureStorageBackends(steps, { tenantId, backends, rebuildSearch });
  return { tenantId, backends, dryRun: false, changes };
}
