import type { TenantsDeps } from './tenant-lifecycle.ts';
import { finishProvisioning } from './tenants.repo.ts';

export type TenantJobs = ReturnType<typeof createTenantJobs>;

/** The steps of a tenant's provisioning, for the workflow's activities (workers/activities/tenants.activities.ts); each is idempotent. */
export function createTenantJobs(deps: Pick<TenantsDeps, 'db' | 'identity'>) {
  const { db, identity } = deps;
  return {
    /** Activity: gives the tenant the default roles; idempotent. */
    async ensureDefaultRoles(tenantId: string): Promise<void> {
      await db.system((tx) => identity.ensureDefaultRoles(tx, tenantId));
    },

    /** Activity: marks a provisioning tenant `active`; a deleted or failed tenant is left as it is. */
    async activate(tenantId: string): Promise<void> {
      await db.system((tx) => finishProvisioning(tx, tenantId, 'active', null));
    },

    /** Activity: marks a provisioning tenant `failed` with the reason; idempotent. */
    async failProvisioning(outcome: { tenantId: string; reason: string }): Promise<void> {
      await db.system((tx) => finishProvisioning(tx, outcome.tenantId, 'failed', outcome.reason.slice(0, 1000)));
    },
  };
}
