import { patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { STORAGE_BACKENDS } from '../../control-plane/storage/storage.constants.ts';
import type { ProvisionStorageRequest, ProvisionStorageResult, StorageBackend, StorageChange } from '../../control-plane/storage/storage.schema.ts';
import type { Activities } from '../activities/index.ts';
import { ensureStorageBackends, localStorageSteps, STORAGE_STEP_RETRY } from './storage-steps.ts';

/**
 * A tenant that holds data may need minutes per step (an index built concurrently, every resource
 * projected or re-projected for search): each step a task on the server's queue, with time to
 * finish. Ensuring and planning a backend heartbeat, so a step whose worker went away is retried
 * after 30 s rather than after its 10 minutes; recording progress or a failure is one statement.
 */
const recordingSteps = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', retry: STORAGE_STEP_RETRY });
const backendSteps = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '30 seconds', retry: STORAGE_STEP_RETRY });
const queuedSteps = {
  beginStorageProvisioning: recordingSteps.beginStorageProvisioning,
  failStorageProvisioning: recordingSteps.failStorageProvisioning,
  ensureStorageBackend: backendSteps.ensureStorageBackend,
  planStorageBackend: backendSteps.planStorageBackend,
};
/** Histories recorded before the short steps ran locally lack this marker, and replay with `queuedSteps`. */
const LOCAL_STEPS = 'provision-storage-local-steps';

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
  const steps = patched(LOCAL_STEPS) && forNewTenant ? localStorageSteps : queuedSteps;
  const backends: StorageBackend[] = request.backends ?? (request.backend === 'all' ? [...STORAGE_BACKENDS] : [request.backend]);
  if (request.dryRun) {
    const changes: StorageChange[] = [];
    for (const backend of backends) changes.push(...(await steps.planStorageBackend({ tenantId, backend, rebuildSearch })));
    return { tenantId, backends, dryRun: true, changes };
  }
  const changes = await ensureStorageBackends(steps, { tenantId, backends, rebuildSearch });
  return { tenantId, backends, dryRun: false, changes };
}
