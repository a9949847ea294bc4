import { clearTenantConditions, recordTenantConditions } from '../telemetry/metrics.ts';
import { GROUP, TENANT_FINALIZER, TENANTS, VERSION, type Kube } from './kube.ts';
import type { ControlledKind } from './runtime/kind.ts';
import { reconcileBySteps } from './runtime/reconcile-by-steps.ts';
import type { StatusDraft } from './runtime/status-draft.ts';
import type { Step } from './runtime/step-runner.ts';
import { declareTenant } from './steps/declare-tenant.ts';
import { ensureTenantNamespace } from './steps/ensure-namespace.ts';
import { ensureConnectionSecret } from './steps/ensure-secret.ts';
import { leaveUnclaimedTenant } from './steps/leave-unclaimed-tenant.ts';
import { markDeleting } from './steps/mark-deleting.ts';
import { provisionStorage } from './steps/provision-storage.ts';
import { reportTenantPhase } from './steps/report-tenant-phase.ts';
import { softDeleteTenant } from './steps/soft-delete-tenant.ts';
import type { TenantObject } from './tenant-object.ts';
import type { ReconcileTenantDeps, TenantRun } from './tenant-run.ts';

export type { ReconcileTenantDeps } from './tenant-run.ts';

/**
 * Brings one Tenant object to its declared state, in order (after the controller's finalizer):
 * the platform tenant, created or updated through the same tenants service as v4; the Namespace;
 * the storage it declares; once provisioning has ended, the connection Secret; then the phase.
 * Every step is idempotent, so a restarted operator simply converges; it requeues while
 * provisioning is under way.
 */
export const reconcileTenantSteps: readonly Step<TenantRun>[] = [declareTenant, ensureTenantNamespace, provisionStorage, ensureConnectionSecret, reportTenantPhase];

/** Cleans up after a deleted Tenant object: its tenant is soft-deleted before the finalizer goes. */
export const finalizeTenantSteps: readonly Step<TenantRun>[] = [
  leaveUnclaimedTenant,
  markDeleting<TenantRun>(({ object }) => `soft-deleting tenant ${object.spec.slug}`),
  softDeleteTenant,
];

/** The Tenant kind as the controller runs it. */
export function tenantKind(deps: ReconcileTenantDeps): ControlledKind<TenantObject> {
  const resource = { group: GROUP, version: VERSION, plural: TENANTS };
  const start = (object: TenantObject, kube: Kube, status: StatusDraft): TenantRun => ({ object, status, kube, deps });
  return {
    kind: 'Tenant',
    ...resource,
    finalizer: TENANT_FINALIZER,
    reconcile: reconcileBySteps(resource, reconcileTenantSteps, start, deps.event),
    finalize: reconcileBySteps(resource, finalizeTenantSteps, start, deps.event),
    follows: (object) => [object.spec.slug],
    observe: (name, object) => recordTenantConditions(name, object ? (object.status?.conditions ?? []) : undefined),
    forget: clearTenantConditions,
    resync: () => deps.ensured.clear(),
  };
}
