import { kebabCase } from '../apps/apps.schema.ts';
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
    /** Without a slug, the child tenant's slug is the kebab-case of its name, as in v4. */
    childTenant?: { name: string; slug?: string };
    parentTenant?: string;
  };
}

/** The slug of the App's child tenant: the declared one, else the kebab-case of its name ('' when none can be derived). */
export const childSlugOf = (spec: AppObject['spec']): string | undefined =>
  spec.childTenant ? (spec.childTenant.slug ?? kebabCase(spec.childTenant.name)) : undefined;
