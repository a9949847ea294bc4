import type { Condition } from './conditions.ts';

/** A `Tenant` custom object as the operator reads it (see crds/tenants.platform.svc.dev.yaml). */
export interface TenantObject {
  apiVersion: string;
  kind: 'Tenant';
  metadata: {
    name: string;
    uid: string;
    generation: number;
    resourceVersion?: string;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: {
    name: string;
    slug: string;
    parent?: string;
    domains?: string[];
    usecase?: 'council' | 'retail' | 'healthcare' | 'finance' | 'manufacturing' | 'generic';
    industry?: string;
    starterTemplate?: string;
    homeRegion?: 'au' | 'ca' | 'eu';
    storageBackends?: string[];
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
