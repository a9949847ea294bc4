import { namedBackends, type BackendStatus } from '../../storage/storage.schema.ts';
import { condition, Reason, storageConditionType } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import { declaredTenant, type TenantRun } from '../tenant-run.ts';

const storageCondition = (b: BackendStatus, generation: number) =>
  b.status === 'ready'
    ? condition(storageConditionType(b.backend), 'True', Reason.StorageReady, `${b.backend} is ready`, generation)
    : b.status === 'failed'
      ? condition(storageConditionType(b.backend), 'False', Reason.StorageFailed, b.error ?? 'failed', generation)
      : condition(storageConditionType(b.backend), 'False', Reason.StoragePending, `${b.backend} is ${b.status}`, generation);

/**
 * Creates the storage the Tenant object declares. The tenant's provisioning workflow provisions
 * the backends declared at creation; once it has ended (the tenant active or failed), a declared
 * backend that is not provisioned (declared later) is provisioned now through the storage
 * service's workflow (a run under way is joined). Records each declared backend's state in status
 * (`storage`) with one condition per backend (`<Backend>StorageProvisioned`). Idempotent; it
 * never requeues: the phase step waits for what is pending.
 */
export const provisionStorage: Step<TenantRun> = {
  name: 'ProvisionStorage',
  async run(run) {
    const { object, status, deps } = run;
    const tenant = declaredTenant(run);
    const backends = namedBackends(object.spec.storageBackends);
    const readiness = tenant.status === 'active' || tenant.status === 'failed' ? await deps.storageReadiness(tenant.id) : undefined;
    const storage = readiness?.backends.filter((b) => backends.includes(b.backend));
    const missing = (storage ?? []).filter((b) => b.status === 'not_provisioned').map((b) => b.backend);
    if (tenant.status === 'active' && missing.length) await deps.provisionStorage(tenant.id, missing);
    run.storage = storage;
    status.set({ storage: (storage ?? []).map((b) => ({ backend: b.backend, status: b.status, ...(b.error ? { message: b.error } : {}) })) });
    for (const backend of storage ?? []) status.condition(storageCondition(backend, object.metadata.generation));
    return 'continue';
  },
};
