import type { BackendStatus } from '../../storage/storage.schema.ts';
import type { Tenant } from '../../tenants/tenants.schema.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';
import { declaredTenant, type TenantRun } from '../tenant-run.ts';

/** A fallback when status notifications are unavailable (the operator hears of changes through the tenants service). */
const PROVISIONING_POLL_MS = 5_000;

function phaseOf(tenant: Tenant, storage: BackendStatus[] | undefined): 'Provisioning' | 'Ready' | 'Failed' {
  if (tenant.status === 'failed' || storage?.some((b) => b.status === 'failed')) return 'Failed';
  if (tenant.status === 'active' && storage?.every((b) => b.status === 'ready')) return 'Ready';
  return 'Provisioning';
}

/**
 * Sums the tenant and its storage up: phase (`Provisioning`, `Ready`, `Failed`), Ready and
 * Degraded, observedGeneration, and an Event when the phase changes. Requeues while provisioning
 * is under way: until the tenant's status change is heard of (only the tenant's own status is
 * announced; storage that is still catching up is polled).
 */
export const reportTenantPhase: Step<TenantRun> = {
  name: 'ReportTenantPhase',
  async run(run) {
    const { object, status, storage } = run;
    const tenant = declaredTenant(run);
    const generation = object.metadata.generation;
    const phase = phaseOf(tenant, storage);
    const failure = tenant.statusReason ?? storage?.find((b) => b.status === 'failed')?.error ?? 'provisioning failed';
    status.set({ phase, observedGeneration: generation });
    status.condition(
      phase === 'Ready'
        ? condition(ConditionType.Ready, 'True', Reason.Provisioned, 'tenant and storage are provisioned', generation)
        : phase === 'Failed'
          ? condition(ConditionType.Ready, 'False', Reason.ProvisionFailed, failure, generation)
          : condition(ConditionType.Ready, 'False', Reason.Provisioning, `tenant is ${tenant.status}`, generation),
    );
    status.condition(
      phase === 'Failed'
        ? condition(ConditionType.Degraded, 'True', Reason.ProvisionFailed, failure, generation)
        : condition(ConditionType.Degraded, 'False', Reason.AsExpected, 'no failures', generation),
    );
    if (object.status?.phase !== phase) {
      if (phase === 'Ready') status.event('Normal', Reason.Provisioned, `tenant ${tenant.slug} (${tenant.id}) is ready`);
      if (phase === 'Failed') status.event('Warning', Reason.ProvisionFailed, failure);
      if (phase === 'Provisioning') status.event('Normal', Reason.Provisioning, `provisioning tenant ${tenant.slug} (${tenant.id})`);
    }
    return phase === 'Provisioning' ? requeueAfter(PROVISIONING_POLL_MS, { untilNotified: tenant.status === 'provisioning' }) : 'continue';
  },
};
