import type { V1OwnerReference } from '@kubernetes/client-node';
import { createIfAbsent, type Ensured, type Kube } from '../kube.ts';
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
 * Ensures the tenant's Namespace `tenant-<slug>`, owned by the Tenant object. Idempotent: one
 * create, "already exists" included, and none while `ensured` remembers it.
 */
export async function ensureNamespace(kube: Kube, tenant: TenantObject, ensured: Ensured): Promise<undefined> {
  const name = namespaceOf(tenant);
  if (ensured.get(`namespace/${name}`) === tenant.metadata.uid) return undefined;
  await createIfAbsent(() =>
    kube.core.createNamespace({
      body: {
        metadata: {
          name,
          labels: { 'app.kubernetes.io/managed-by': 'svc-platform-operator', 'platform.svc.dev/tenant': tenant.spec.slug },
          ownerReferences: [ownerReference(tenant)],
        },
      },
    }),
  );
  ensured.set(`namespace/${name}`, tenant.metadata.uid);
  return undefined;
}
