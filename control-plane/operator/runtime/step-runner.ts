import type { CustomObject, StepResult } from '../custom-object.ts';
import { createStatusDraft, type StatusDraft } from './status-draft.ts';

/** Look again after `requeueAfterMs`; `untilNotified`: the wait ends with a followed change, so the look is a fallback. */
export type Requeue = NonNullable<StepResult>;

/** What a step tells the runner: go on to the next step, stop here (the reconcile is done), or stop and look again later. */
export type StepOutcome = 'continue' | 'stop' | Requeue;

export const requeueAfter = (requeueAfterMs: number, options: { untilNotified?: boolean } = {}): Requeue => ({ requeueAfterMs, ...options });

/** What the steps of one reconcile share: the object, the status draft, and whatever the kind adds. */
export interface StepRun<O extends CustomObject = CustomObject> {
  object: O;
  status: StatusDraft;
}

/** One named step of a reconcile: it ensures one thing, sets the status and conditions it owns, and says how to go on. */
export interface Step<R extends StepRun> {
  /** PascalCase, as in logs: `DeclareTenant`, `ProvisionStorage`. */
  name: string;
  /**
   * The status set so far is written as soon as this step continues, before the next step runs:
   * the object shows what the next steps are doing (e.g. `Deleting`) while they do it. Later
   * steps then set no status (Events they may still record).
   */
  writeStatusAfter?: boolean;
  /**
   * For a step that runs after the status was written (see `writeStatusAfter`): sets the
   * condition it owns as it stands while its work is under way, written with that status.
   */
  announce?(run: R): void;
  run(run: R): Promise<StepOutcome>;
}

/** Where the runner writes: the object's status (one patch), and Events. */
export interface StatusWriter {
  patch(status: Record<string, unknown>): Promise<void>;
  event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

/**
 * Runs `steps` in order until one stops or asks for a requeue, then writes the status the steps
 * set (once: at the end, or after the step that asks for it first, with what the steps after it
 * announce), then the Events they recorded.
 * A step that throws ends the reconcile with nothing written after it; the controller retries.
 */
export async function runSteps<R extends StepRun>(steps: readonly Step<R>[], start: (status: StatusDraft) => R, writer: StatusWriter): Promise<StepResult> {
  const draft = createStatusDraft();
  const run = start(draft.draft);
  let written = false;
  const write = async () => {
    if (written) return;
    written = true;
    draft.seal();
    const status = draft.toStatus(run.object.status?.conditions, new Date().toISOString());
    if (status) await writer.patch(status);
  };
  let outcome: StepOutcome = 'continue';
  for (const [index, step] of steps.entries()) {
    outcome = await step.run(run);
    if (outcome !== 'continue') break;
    if (step.writeStatusAfter && !written) {
      for (const later of steps.slice(index + 1)) later.announce?.(run);
      await write();
    }
  }
  await write();
  for (const event of draft.events) await writer.event(event.type, event.reason, event.message);
  return typeof outcome === 'object' ? outcome : undefined;
}
