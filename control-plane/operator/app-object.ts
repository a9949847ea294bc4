import type { CustomObject } from './custom-object.ts';

/** An `App` custom object as the operator reads it (see crds/apps.platform.svc.dev.yaml). */
export interface AppObject extends CustomObject {
  kind: 'App';
  spec: {
    name: string;
    key?: string;
    template?: string;
    source?: string;
    appUrl?: string;
    lifecycleStatus?: 'pending' | 'active' | 'suspended' | 'retired';
    companyTenant: string;
    childTenant?: { name: string; slug: string };
  };
}
