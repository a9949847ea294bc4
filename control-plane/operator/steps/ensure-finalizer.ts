import { GROUP, mergePatch, TENANT_FINALIZER, TENANTS, VERSION, type Kube } from '../kube.ts';
import type { StepResult, TenantObject } from '../tenant-object.ts';

/** Ensures the finalizer that lets the operator soft-delete the tenant before the object goes. Idempotent. */
export async function ensureFinalizer(kube: Kube, tenant: TenantObject): Promise<StepResult> {
  const finalizers = tenant.metadata.finalizers ?? [];
  if (finalizers.includes(TENANT_FINALIZER)) return undefined;
  await kube.custom.patchClusterCustomObject(
    { group: GROUP, version: VERSION, plural: TENANTS, name: tenant.metadata.name, body: { metadata: { finalizers: [...finalizers, TENANT_FINALIZER] } } },
    mergePatch,
  );
  tenant.metadata.finalizers = [...finalizers, TENANT_FINALIZER];
  return undefined;
}

/** Removes the operator's finalizer, letting Kubernetes delete the object. Idempotent. */
export async function removeFinalizer(kube: Kube, tenant: TenantObject): Promise<void> {
  const finalizers = tenant.metadata.finalizers ?? [];
  if (!finalizers.includes(TENANT_FINALIZER)) return;
  await kube.custom.patchClusterCustomObject(
    { group: GROUP, version: VERSION, plural: TENANTS, name: tenant.metadata.name, body: { metadata: { finalizers: finalizers.filter((f) => f !== TENANT_FINALIZER) } } },
    mergePatch,
  );
}
