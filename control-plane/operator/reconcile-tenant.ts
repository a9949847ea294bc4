import { DeclaredElsewhereError } from '../errors.ts';
import { namedBackends, type BackendStatus, type StorageBackend, type StorageReadiness } from '../storage/storage.schema.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { condition, ConditionType, deletingConditions, mergeConditions, Reason, storageConditionType } from './conditions.ts';
import { TENANT_FINALIZER, TENANTS, type Ensured, type Kube } from './kube.ts';
import { patchStatus } from './status-patch.ts';
import { declareAs, declarerOf } from './steps/declare-as.ts';
import { ensureFinalizer, removeFinalizer } from './steps/ensure-finalizer.ts';
import { ensureNamespace, namespaceOf } from './steps/ensure-namespace.ts';
import { ensureSecret, SECRET_NAME } from './steps/ensure-secret.ts';
import type { CustomObject } from './custom-object.ts';
import type { StepResult, TenantObject } from './tenant-object.ts';

export interface ReconcileTenantDeps {
  kube: Kube;
  tenants: Pick<TenantsService, 'declare' | 'removeDeclared'>;
  storageReadiness(tenantId: string): Promise<StorageReadiness>;
  /** Starts provisioning storage backends of an existing tenant (a run under way is joined). */
  provisionStorage(tenantId: string, backends: StorageBackend[]): Promise<void>;
  /** The platform's public origin, for the connection details. */
  publicUrl: string;
  /** The Namespaces and Secrets ensured since the last resync. */
  ensured: Ensured;
  /** Records a Kubernetes Event on the object (reason PascalCase, a short message). */
  event(object: CustomObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

/** A fallback when status notifications are unavailable (the operator hears of changes through the tenants service). */
const PROVISIONING_POLL_MS = 5_000;
const TENANT_FINALIZERS = { plural: TENANTS, finalizer: TENANT_FINALIZER };

function phaseOf(tenant: Tenant, storage: BackendStatus[] | undefined): 'Provisioning' | 'Ready' | 'Failed' {
  if (tenant.status === 'failed' || storage?.some((b) => b.status === 'failed')) return 'Failed';
  if (tenant.status === 'active' && storage?.every((b) => b.status === 'ready')) return 'Ready';
  return 'Provisioning';
}

/**
 * Brings one Tenant object to its declared state, in order: the finalizer; the platform tenant
 * (created or updated through the same tenants service as v4, whose provisioning workflow
 * `tenant-<id>-provision` does the work); the Namespace, and once provisioning has ended the
 * connection Secret; then status (phase, Ready / StorageProvisioned per backend / Degraded,
 * observedGeneration). A deleted object soft-deletes its tenant before the finalizer goes. Every
 * step is idempotent, so a restarted operator simply converges; it requeues while provisioning is
 * under way.
 */
export async function reconcileTenant(deps: ReconcileTenantDeps, object: TenantObject): Promise<StepResult> {
  const { kube } = deps;
  const generation = object.metadata.generation;

  if (object.metadata.deletionTimestamp) {
    // An object that never got its tenant (refused, as one that differs from an existing tenant) leaves tenants alone.
    if (object.status?.tenantId || object.status?.phase !== 'Failed') {
      const message = `soft-deleting tenant ${object.spec.slug}`;
      await patchStatus(kube, TENANTS, object, { phase: 'Deleting', conditions: deletingConditions(object.status?.conditions, message, generation, new Date().toISOString()) });
      await deps.tenants.removeDeclared(object.spec.slug, declarerOf(object));
      await deps.event(object, 'Normal', 'Deleted', `tenant ${object.spec.slug} soft-deleted`);
    }
    await removeFinalizer(kube, TENANT_FINALIZERS, object);
    return undefined;
  }

  await ensureFinalizer(kube, TENANT_FINALIZERS, object);
  const backends = namedBackends(object.spec.storageBackends);
  let tenant: Tenant;
  try {
    tenant = await declareAs(kube, object, (declaredBy) =>
      deps.tenants.declare({
        slug: object.spec.slug,
        name: object.spec.name.trim(),
        parent: object.spec.parent,
        domains: object.spec.domains ?? [],
        usecase: object.spec.usecase ?? 'generic',
        industry: object.spec.industry?.trim(),
        starterTemplate: object.spec.starterTemplate ?? 'blank-vertical-template',
        homeRegion: object.spec.homeRegion,
        storageBackends: backends,
        declaredBy,
      }),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof DeclaredElsewhereError ? Reason.DeclaredElsewhere : Reason.ProvisionFailed;
    await patchStatus(kube, TENANTS, object, {
      phase: 'Failed',
      observedGeneration: generation,
      conditions: mergeConditions(object.status?.conditions, [
        condition(ConditionType.Ready, 'False', reason, message, generation),
        condition(ConditionType.Degraded, 'True', reason, message, generation),
      ], new Date().toISOString()),
    });
    if (object.status?.phase !== 'Failed') await deps.event(object, 'Warning', reason, message);
    return { requeueAfterMs: 10_000 };
  }

  await ensureNamespace(kube, object, deps.ensured);
  // The declared backends only; one declared after the tenant was provisioned is provisioned now.
  const readiness = tenant.status === 'active' || tenant.status === 'failed' ? await deps.storageReadiness(tenant.id) : undefined;
  const storage = readiness?.backends.filter((b) => backends.includes(b.backend));
  const missing = (storage ?? []).filter((b) => b.status === 'not_provisioned').map((b) => b.backend);
  if (tenant.status === 'active' && missing.length) await deps.provisionStorage(tenant.id, missing);
  // The connection details are complete once provisioning has ended: the Secret is written then, once.
  if (storage) {
    await ensureSecret(
      kube,
      object,
      {
        TENANT_ID: tenant.id,
        TENANT_SLUG: tenant.slug,
        HOME_REGION: tenant.homeRegion ?? '',
        API_V4_URL: `${deps.publicUrl}/v4`,
        API_V3_URL: `${deps.publicUrl}/api/svc/v3`,
        ...Object.fromEntries(storage.map((b) => [`STORAGE_${b.backend.toUpperCase()}`, JSON.stringify(b.location)])),
      },
      deps.ensured,
    );
  }

  const phase = phaseOf(tenant, storage);
  const failure = tenant.statusReason ?? storage?.find((b) => b.status === 'failed')?.error ?? 'provisioning failed';
  const conditions = [
    phase === 'Ready'
      ? condition(ConditionType.Ready, 'True', Reason.Provisioned, 'tenant and storage are provisioned', generation)
      : phase === 'Failed'
        ? condition(ConditionType.Ready, 'False', Reason.ProvisionFailed, failure, generation)
        : condition(ConditionType.Ready, 'False', Reason.Provisioning, `tenant is ${tenant.status}`, generation),
    ...(storage ?? []).map((b) =>
      b.status === 'ready'
        ? condition(storageConditionType(b.backend), 'True', Reason.StorageReady, `${b.backend} is ready`, generation)
        : b.status === 'failed'
          ? condition(storageConditionType(b.backend), 'False', Reason.StorageFailed, b.error ?? 'failed', generation)
          : condition(storageConditionType(b.backend), 'False', Reason.StoragePending, `${b.backend} is ${b.status}`, generation),
    ),
    phase === 'Failed'
      ? condition(ConditionType.Degraded, 'True', Reason.ProvisionFailed, failure, generation)
      : condition(ConditionType.Degraded, 'False', Reason.AsExpected, 'no failures', generation),
  ];
  await patchStatus(kube, TENANTS, object, {
    phase,
    observedGeneration: generation,
    tenantId: tenant.id,
    homeRegion: tenant.homeRegion ?? undefined,
    namespace: namespaceOf(object),
    secretName: storage ? SECRET_NAME : undefined,
    provisioningWorkflowId: PROVISION_TENANT.workflowId(tenant.id),
    storage: (storage ?? []).map((b) => ({ backend: b.backend, status: b.status, ...(b.error ? { message: b.error } : {}) })),
    conditions: mergeConditions(object.status?.conditions, conditions, new Date().toISOString()),
  });
  if (object.status?.phase !== phase) {
    if (phase === 'Ready') await deps.event(object, 'Normal', Reason.Provisioned, `tenant ${tenant.slug} (${tenant.id}) is ready`);
    if (phase === 'Failed') await deps.event(object, 'Warning', Reason.ProvisionFailed, failure);
    if (phase === 'Provisioning') await deps.event(object, 'Normal', Reason.Provisioning, `provisioning tenant ${tenant.slug} (${tenant.id})`);
  }
  // Only the tenant's own status is announced; storage that is still catching up is polled.
  return phase === 'Provisioning' ? { requeueAfterMs: PROVISIONING_POLL_MS, untilNotified: tenant.status === 'provisioning' } : undefined;
}
