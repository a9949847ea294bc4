import type { StorageBackend, StorageReadiness, BackendStatus } from '../storage/storage.schema.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsDeclared } from '../tenants/tenants.declared.ts';
import type { Ensured, Kube } from './kube.ts';
import type { RecordEvent } from './runtime/event-recorder.ts';
import type { StepRun } from './runtime/step-runner.ts';
import type { TenantObject } from './tenant-object.ts';

/** What reconciling Tenant objects needs of the platform and the cluster. */
export interface ReconcileTenantDeps {
  tenants: Pick<TenantsDeclared, 'declare' | 'removeDeclared'>;
  storageReadiness(tenantId: string): Promise<StorageReadiness>;
  /** Starts provisioning storage backends of an existing tenant (a run under way is joined). */
  provisionStorage(tenantId: string, backends: StorageBackend[]): Promise<void>;
  /** The platform's public origin, for the connection details. */
  publicUrl: string;
  /** The Namespaces and Secrets ensured since the last resync. */
  ensured: Ensured;
  event: RecordEvent;
}

/** What the steps of one reconcile of a Tenant object share. */
export interface TenantRun extends StepRun<TenantObject> {
  deps: ReconcileTenantDeps;
  /** The Kubernetes API, through the controller's echo suppression and cache. */
  kube: Kube;
  /** The platform tenant, once `DeclareTenant` has run. */
  tenant?: Tenant;
  /** The declared storage backends' states, once `ProvisionStorage` has run and the tenant's provisioning has ended. */
  storage?: BackendStatus[];
}

/** The platform tenant a step after `DeclareTenant` works on. */
export function declaredTenant(run: TenantRun): Tenant {
  if (!run.tenant) throw new Error('the tenant is not declared yet: DeclareTenant runs before this step');
  return run.tenant;
}
