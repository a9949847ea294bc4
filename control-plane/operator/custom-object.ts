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
 * What a reconcile tells the controller: `undefined` when done, or when to look again.
 * `untilNotified`: the wait ends with a followed change (a tenant's status), which the controller
 * hears of, so the look is only a fallback for a lost notification.
 */
export type StepResult = undefined | { requeueAfterMs: number; untilNotified?: boolean };
