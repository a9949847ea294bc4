import type { Step } from '../runtime/step-runner.ts';
import type { TenantRun } from '../tenant-run.ts';
import { declarerOf } from './declare-as.ts';

/** Soft-deletes the tenant a deleted Tenant object declared, through the tenants service. Idempotent. */
export const softDeleteTenant: Step<TenantRun> = {
  name: 'SoftDeleteTenant',
  async run({ object, deps, status }) {
    await deps.tenants.removeDeclared(object.spec.slug, declarerOf(object));
    status.event('Normal', 'Deleted', `tenant ${object.spec.slug} soft-deleted`);
    return 'continue';
  },
};
