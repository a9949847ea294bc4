import type { V1OwnerReference } from '@kubernetes/client-node';
import { createIfAbsent, exists, type Kube } from '../kube.ts';
import type { TenantObject } from '../tenant-object.ts';

export const namespaceOf = (tenant: TenantObject) => `tenant-${tenant.spec.slug}`;

export const ownerReference = (tenant: TenantObject): V1OwnerReference => ({
  apiVersion: tenant.apiVersion,
  kind: 'Tenant',
  name: tenant.metadata.name,
  uid: tenant.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

/**
 * Ensures the tenant's Namespace `tenant-<slug>`, owned by the Tenant object. Idempotent. Looks
 * before it creates: a read is far cheaper for the API server than a create that it refuses.
 */
export async function ensureNamespace(kube: Kube, tenant: TenantObject): Promise<undefined> {
  if (await exists(() => kube.core.readNamespace({ name: namespaceOf(tenant) }))) return undefined;
  await createIfAbsent(() =>
    kube.core.createNamespace({
      body: {
        metadata: {
          name: namespaceOf(tenant),
          labels: { 'app.kubernetes.io/managed-by': 'svc-platform-operator', 'platform.svc.dev/tenant': tenant.spec.slug },
          ownerReferences: [ownerReference(tenant)],
        },
      },
    }),
  );
  return undefined;
}
