import type { Step } from '../runtime/step-runner.ts';
import type { TenantRun } from '../tenant-run.ts';

/**
 * A deleted Tenant object that never got its tenant (refused, as one that differs from an
 * existing tenant, or declared by another object) leaves tenants alone: the cleanup stops here and
 * the finalizer goes.
 */
export const leaveUnclaimedTenant: Step<TenantRun> = {
  name: 'LeaveUnclaimedTenant',
  async run({ object }) {
    return object.status?.tenantId || object.status?.phase !== 'Failed' ? 'continue' : 'stop';
  },
};
