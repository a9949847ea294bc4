import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import type { TenantRun } from '../tenant-run.ts';
import { declarerOf } from '../declare-as.ts';

/**
 * Soft-deletes the tenant a deleted Tenant object declared, through the tenants service.
 * Idempotent. Runs after the status is written (`MarkDeleting`), so it announces `TenantRemoved`
 * False (Deleting) with that status; the object goes once it is done.
 */
export const softDeleteTenant: Step<TenantRun> = {
  name: 'SoftDeleteTenant',
  announce({ object, status }) {
    status.condition(condition(ConditionType.TenantRemoved, 'False', Reason.Deleting, `soft-deleting tenant ${object.spec.slug}`, object.metadata.generation));
  },
  async run({ object, deps, status }) {
    await deps.tenants.removeDeclared(object.spec.slug, declarerOf(object));
    status.event('Normal', 'Deleted', `tenant ${object.spec.slug} soft-deleted`);
    return 'continue';
  },
};
