import type { CustomObject } from './custom-object.ts';

export type { StepResult } from './custom-object.ts';

/** A `Tenant` custom object as the operator reads it (see crds/tenants.platform.svc.dev.yaml). */
export interface TenantObject extends CustomObject {
  kind: 'Tenant';
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
}
