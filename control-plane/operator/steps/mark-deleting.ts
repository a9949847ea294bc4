import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step, StepRun } from '../runtime/step-runner.ts';

/** Sets the object's other conditions as they were: those no step has set in this reconcile (written whole, a list left out would go). */
export function keepConditions({ object, status }: StepRun): void {
  for (const kept of object.status?.conditions ?? []) if (!status.hasCondition(kept.type)) status.condition(kept);
}

/**
 * Shows the object as being deleted before its cleanup runs: phase `Deleting`, Ready False
 * (reason `Deleting`, `message` of the run), the other conditions as they were (unless a step
 * before this one, or one after it announcing its condition, sets them). The status is
 * written at once, so `kubectl get` shows `Deleting` while the steps after this one clean up.
 */
export function markDeleting<R extends StepRun>(message: (run: R) => string): Step<R> {
  return {
    name: 'MarkDeleting',
    writeStatusAfter: true,
    async run(run) {
      const { object, status } = run;
      status.set({ phase: 'Deleting' });
      status.condition(condition(ConditionType.Ready, 'False', Reason.Deleting, message(run), object.metadata.generation));
      keepConditions(run);
      return 'continue';
    },
  };
}
