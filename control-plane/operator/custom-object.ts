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

/** A reconcile step ensures one thing: `undefined` to go on, or when to look again. */
export type StepResult = undefined | { requeueAfterMs: number };
