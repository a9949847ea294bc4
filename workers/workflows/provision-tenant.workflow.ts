import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { CancellationScope, executeChild, proxyActivities } from '@temporalio/workflow';
import type { ProvisionTenantPlan } from '../../control-plane/tenants/tenants.schema.ts';
import type { Activities } from '../activities/index.ts';

const { ensureDefaultRoles, ensureExampleWorkflows, activateTenant, failTenantProvisioning } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});

const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
const WORKFLOW_KEY = defineSearchAttributeKey('WorkflowKey', SearchAttributeType.KEYWORD);

/**
 * Provisions a tenant (workflow id `tenant-<id>-provision`): default roles, the example workflows
 * and its storage (the `provisionStorage` child workflow, `tenant-<id>-storage`), then marks it
 * `active`. Every step is idempotent, so a retried or replayed run changes nothing twice. On
 * failure or cancellation the tenant is marked `failed` with the reason (a deleted tenant stays deleted).
 */
export async function provisionTenant(plan: ProvisionTenantPlan): Promise<void> {
  const { tenantId } = plan;
  try {
    await ensureDefaultRoles(tenantId);
    await ensureExampleWorkflows(tenantId);
    await executeChild('provisionStorage', {
      workflowId: `tenant-${tenantId}-storage`,
      args: [{ tenantId, backend: 'all', dryRun: false, rebuildSearch: false }],
      typedSearchAttributes: [
        { key: TENANT_ID, value: tenantId },
        { key: WORKFLOW_KEY, value: 'tenant-storage' },
      ],
    });
    await activateTenant(tenantId);
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    await CancellationScope.nonCancellable(() => failTenantProvisioning({ tenantId, reason }));
    throw error;
  }
}
