import type { Condition } from './conditions.ts';

/** What every custom object the operator reconciles has (cluster-scoped, with a status subresource). */
export interface CustomObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    uid: string;
    generation: number;
    resourceVersion?: string;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  status?: {
    phase?: string;
    observedGeneration?: number;
    conditions?: Condition[];
    [key: string]: unknown;
  };
}

/**
 * A reconcile step ensures one thing: `undefined` to go on, or when to look again. `untilNotified`:
 * the wait ends with a tenant status change, which the operator hears of, so the look is only a
 * fallback for a lost notification.
 */
export type StepResult = undefined | { requeueAfterMs: number; untilNotified?: boolean };
