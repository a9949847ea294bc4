import { sameJson } from '../../json/same-json.ts';
import { statusOf, type Kube } from '../kube.ts';
import type { TenantObject } from '../tenant-object.ts';
import { namespaceOf, ownerReference } from './ensure-namespace.ts';

export const SECRET_NAME = 'tenant-connection';

/**
 * Ensures the Secret `tenant-connection` in the tenant's Namespace holds its connection details
 * (tenant id and slug, home region, API base URLs, storage locations); replaced only when they change.
 */
export async function ensureSecret(kube: Kube, tenant: TenantObject, details: Record<string, string>): Promise<undefined> {
  const namespace = namespaceOf(tenant);
  const data = Object.fromEntries(Object.entries(details).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  const body = {
    metadata: { name: SECRET_NAME, namespace, labels: { 'app.kubernetes.io/managed-by': 'svc-platform-operator' }, ownerReferences: [ownerReference(tenant)] },
    type: 'Opaque',
    data,
  };
  try {
    const current = await kube.core.readNamespacedSecret({ name: SECRET_NAME, namespace });
    // The API server returns a Secret's keys sorted, whatever order they were written in.
    if (sameJson(current.data ?? {}, data)) return undefined;
    await kube.core.replaceNamespacedSecret({ name: SECRET_NAME, namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } });
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
    await kube.core.createNamespacedSecret({ namespace, body });
  }
  return undefined;
}
