import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import type { TenantRun } from '../tenant-run.ts';
import { keepConditions } from './mark-deleting.ts';

/**
 * A deleted Tenant object that never got its tenant (refused, as one that differs from an
 * existing tenant, or declared by another object) leaves tenants alone: `TenantClaimed` False
 * (Unclaimed), the other conditions as they were; the cleanup stops here and the finalizer goes.
 * One that got it goes on with `TenantClaimed` True (Claimed).
 */
export const leaveUnclaimedTenant: Step<TenantRun> = {
  name: 'LeaveUnclaimedTenant',
  async run(run) {
    const { object, status } = run;
    const generation = object.metadata.generation;
    const { slug } = object.spec;
    if (object.status?.tenantId || object.status?.phase !== 'Failed') {
      status.condition(condition(ConditionType.TenantClaimed, 'True', Reason.Claimed, `tenant ${slug} goes with this object`, generation));
      return 'continue';
    }
    status.condition(condition(ConditionType.TenantClaimed, 'False', Reason.Unclaimed, `this object never got tenant ${slug}: it is left alone`, generation));
    keepConditions(run);
    return 'stop';
  },
};
