import type { StepResult } from '../custom-object.ts';

/** The longest wait between two looks at an object that asked to be looked at again, or whose reconcile failed. */
export const MAX_REQUEUE_MS = 30_000;
/** The first retry after a failure waits twice this; each failure in a row doubles the wait. */
const FIRST_FAILURE_MS = 250;
/** A requeue's delay doubles with each requeue in a row, at most this many times. */
const MAX_REQUEUE_DOUBLINGS = 5;

/**
 * Per-key backoff. Failures in a row wait 500 ms, 1 s, 2 s, ... up to 30 s. Requeues in a row (an
 * object waiting for something) wait the asked delay, doubled with each requeue in a row up to 32
 * times, up to 30 s; a wait that ends with a change the controller is notified of waits the most,
 * since the notification comes first. A reconcile that ends with nothing to wait for resets both.
 */
export function createBackoff(maxMs = MAX_REQUEUE_MS) {
  const failures = new Map<string, number>();
  const requeues = new Map<string, number>();
  return {
    /** A reconcile of `key` failed: which attempt in a row it was, and how long to wait before the next. */
    failed(key: string): { attempt: number; delayMs: number } {
      const attempt = (failures.get(key) ?? 0) + 1;
      failures.set(key, attempt);
      return { attempt, delayMs: Math.min(maxMs, FIRST_FAILURE_MS * 2 ** attempt) };
    },
    /** A reconcile of `key` succeeded and asked to be looked at again: how long to wait. `notified`: changes are heard of. */
    requeued(key: string, result: NonNullable<StepResult>, notified: boolean): number {
      failures.delete(key);
      const inARow = requeues.get(key) ?? 0;
      requeues.set(key, inARow + 1);
      if (result.untilNotified && notified) return maxMs;
      return Math.min(maxMs, result.requeueAfterMs * 2 ** Math.min(inARow, MAX_REQUEUE_DOUBLINGS));
    },
    /** A reconcile of `key` succeeded with nothing to wait for, or the object is gone. */
    reset(key: string): void {
      failures.delete(key);
      requeues.delete(key);
    },
  };
}

export type Backoff = ReturnType<typeof createBackoff>;
