import { kebabCase } from '../../apps/apps.schema.ts';
import type { AppObject } from '../app-object.ts';
import { reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';

/**
 * The app's key: `spec.key`, else the one recorded in status at creation, else the kebab-case of
 * the name. Once recorded it never changes (the CRD forbids changing `spec.key`; a key added to
 * the spec later must equal the recorded one).
 */
export function keyOf(object: AppObject): { key: string; problem?: { reason: string; message: string } } {
  const recorded = typeof object.status?.key === 'string' ? object.status.key : undefined;
  if (object.spec.key && recorded && object.spec.key !== recorded) {
    return { key: recorded, problem: { reason: Reason.KeyMismatch, message: `spec.key "${object.spec.key}" differs from the app's key "${recorded}", which cannot change` } };
  }
  const key = object.spec.key ?? recorded ?? kebabCase(object.spec.name);
  return key ? { key } : { key, problem: { reason: Reason.InvalidKey, message: 'the name has no letters or digits to make a key from; set spec.key' } };
}

/**
 * Refuses an App whose key cannot be made or differs from the recorded one: `Failed` (KeyMismatch,
 * InvalidKey), no requeue. `KeyValid` says which.
 */
export const checkAppKey: Step<AppRun> = {
  name: 'CheckAppKey',
  async run(run) {
    const generation = run.object.metadata.generation;
    const { key, problem } = keyOf(run.object);
    if (!problem) {
      run.status.condition(condition(ConditionType.KeyValid, 'True', Reason.KeyAccepted, `the app's key is "${key}"`, generation));
      return 'continue';
    }
    run.status.condition(condition(ConditionType.KeyValid, 'False', problem.reason, problem.message, generation));
    reportApp(run, 'Failed', condition(ConditionType.Ready, 'False', problem.reason, problem.message, generation));
    return 'stop';
  },
};
