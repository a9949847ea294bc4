import type { AppRun } from '../app-run.ts';
import type { Step } from '../runtime/step-runner.ts';
import { declarerOf } from './declare-as.ts';

/**
 * Removes a deleted App's enrollment from its company tenant and soft-deletes its child tenant (one
 * below the company tenant only), through the apps service. Idempotent.
 */
export const removeEnrollment: Step<AppRun> = {
  name: 'RemoveEnrollment',
  async run({ object, deps, key, status }) {
    if (key) await deps.apps.removeDeclared(object.spec.companyTenant, key, declarerOf(object));
    status.event('Normal', 'Deleted', `app ${key} removed from ${object.spec.companyTenant}`);
    return 'continue';
  },
};
