import { CancellationScope, executeChild, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { STORAGE_BACKENDS } from '../../control-plane/storage/storage.constants.ts';
import { PROVISION_STORAGE, PROVISION_TENANT, TENANT_ID, WORKFLOW_KEY } from '../../control-plane/temporal/workflow-contract.ts';
import type { ProvisionTenantPlan } from '../../control-plane/tenants/tenants.schema.ts';
import type { Activities } from '../activities/index.ts';
import { ensureStorageBackends, localStorageSteps } from './storage-steps.ts';

const STEP_OPTIONS = { startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5, initialInterval: '1 second' } } as const;
/** How runs started before LOCAL_STEPS take the steps: each one a task on the server's queue, storage in a child workflow. */
const queuedSteps = proxyActivities<Activities>(STEP_OPTIONS);
/** Each step is a few milliseconds of SQL: the worker runs it inside the workflow task and records a marker. */
const localSteps = proxyLocalActivities<Activities>(STEP_OPTIONS);

/**
 * Provisions a tenant (workflow id `tenant-<id>-provision`): default roles, the example workflows
 * and its storage (the plan's backends, else every one), then marks it `active`. Every step is a
 * local activity and idempotent, so a retried or replayed run changes nothing twice. On failure or
 * cancellation the tenant is marked `failed` with the reason (a deleted tenant stays deleted). Runs
 * started before the steps ran locally provision storage in the child workflow `tenant-<id>-storage`.
 */
export async function provisionTenant(plan: ProvisionTenantPlan): Promise<void> {
  const { tenantId } = plan;
  // Histories recorded before the steps ran locally lack this marker, and replay with `queuedSteps`.
  const local = patched(PROVISION_TENANT.localStepsPatch);
  const { ensureDefaultRoles, ensureExampleWorkflows, activateTenant, failTenantProvisioning } = local ? localSteps : queuedSteps;
  try {
    await ensureDefaultRoles(tenantId);
    await ensureExampleWorkflows(tenantId);
    if (local) {
      await ensureStorageBackends(localStorageSteps, { tenantId, backends: plan.storageBackends ?? [...STORAGE_BACKENDS], rebuildSearch: false });
    } else {
      await executeChild(PROVISION_STORAGE.type, {
        workflowId: PROVISION_STORAGE.workflowId(tenantId),
        args: [{ tenantId, backend: 'all', dryRun: false, rebuildSearch: false }],
        typedSearchAttributes: [
          { key: TENANT_ID, value: tenantId },
          { key: WORKFLOW_KEY, value: PROVISION_STORAGE.childKey },
        ],
      });
    }
    await activateTenant(tenantId);
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    await CancellationScope.nonCancellable(() => failTenantProvisioning({ tenantId, reason }));
    throw error;
  }
}
