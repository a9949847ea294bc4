import type { AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import { declarerOf } from '../declare-as.ts';

/**
 * Removes a deleted App's enrollment from its company tenant and soft-deletes its child tenant (one
 * below the company tenant only), through the apps service. Idempotent. Runs after the status is
 * written (`MarkDeleting`), so it announces `EnrollmentRemoved` False (Deleting) with that status;
 * the object goes once it is done.
 */
export const removeEnrollment: Step<AppRun> = {
  name: 'RemoveEnrollment',
  announce({ object, key, status }) {
    const message = `removing app ${key || object.metadata.name} from ${object.spec.companyTenant}`;
    status.condition(condition(ConditionType.EnrollmentRemoved, 'False', Reason.Deleting, message, object.metadata.generation));
  },
  async run({ object, deps, key, status }) {
    if (key) await deps.apps.removeDeclared(object.spec.companyTenant, key, declarerOf(object));
    status.event('Normal', 'Deleted', `app ${key} removed from ${object.spec.companyTenant}`);
    return 'continue';
  },
};
