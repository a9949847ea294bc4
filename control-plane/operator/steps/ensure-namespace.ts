import { createHash } from 'node:crypto';
import type { V1OwnerReference } from '@kubernetes/client-node';
import { createIfAbsent, type Ensured, type Kube } from '../kube.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import type { TenantObject } from '../tenant-object.ts';
import type { TenantRun } from '../tenant-run.ts';

/** Longest Kubernetes Namespace name (an RFC 1123 label). */
const MAX_NAMESPACE_LENGTH = 63;

/**
 * `tenant-<slug>`. A slug longer than 56 characters (slugs may have 63) would make a name too long
 * for a Namespace: its first 46 characters then stand with 8 hex digits of the slug's SHA-256.
 */
export function namespaceOf(tenant: TenantObject): string {
  const name = `tenant-${tenant.spec.slug}`;
  if (name.length <= MAX_NAMESPACE_LENGTH) return name;
  return `tenant-${tenant.spec.slug.slice(0, 46).replace(/-+$/, '')}-${createHash('sha256').update(tenant.spec.slug).digest('hex').slice(0, 8)}`;
}

/** The entry in `Ensured` that remembers a Namespace (the Secret step forgets it when the Namespace went away). */
export const ensuredNamespaceKey = (name: string) => `namespace/${name}`;

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
  if (ensured.get(ensuredNamespaceKey(name)) === tenant.metadata.uid) return undefined;
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
  ensured.set(ensuredNamespaceKey(name), tenant.metadata.uid);
  return undefined;
}

/** Step: the tenant's Namespace (see `ensureNamespace`), named in status, with `NamespaceReady` True. Idempotent. */
export const ensureTenantNamespace: Step<TenantRun> = {
  name: 'EnsureNamespace',
  async run({ kube, object, deps, status }) {
    await ensureNamespace(kube, object, deps.ensured);
    const namespace = namespaceOf(object);
    status.set({ namespace });
    status.condition(condition(ConditionType.NamespaceReady, 'True', Reason.NamespaceCreated, `Namespace ${namespace} exists`, object.metadata.generation));
    return 'continue';
  },
};
