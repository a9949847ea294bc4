import type { CustomObject, StepResult } from '../custom-object.ts';
import type { Kube } from '../kube.ts';
import type { RecordEvent } from './event-recorder.ts';
import { patchStatus, type Resource } from './status-patch.ts';
import { runSteps, type Step, type StepRun } from './step-runner.ts';
import type { StatusDraft } from './status-draft.ts';

/**
 * A kind's `reconcile` or `finalize` as `steps`: each object's run is made by `start`, its status
 * written through the status subresource of `resource`, its Events recorded by `event`.
 */
export function reconcileBySteps<O extends CustomObject, R extends StepRun<O>>(
  resource: Resource,
  steps: readonly Step<R>[],
  start: (object: O, kube: Kube, status: StatusDraft) => R,
  event: RecordEvent,
): (object: O, kube: Kube) => Promise<StepResult> {
  return (object, kube) =>
    runSteps(steps, (status) => start(object, kube, status), {
      patch: (status) => patchStatus(kube, resource, object, status),
      event: (type, reason, message) => event(object, type, reason, message),
    });
}
