import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step, StepRun } from '../runtime/step-runner.ts';

/**
 * Shows the object as being deleted before its cleanup runs: phase `Deleting`, Ready False
 * (reason `Deleting`, `message` of the run), the other conditions as they were. The status is
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
      for (const kept of object.status?.conditions ?? []) if (kept.type !== ConditionType.Ready) status.condition(kept);
      return 'continue';
    },
  };
}
