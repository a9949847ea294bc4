import { sameJson } from '../../json/same-json.ts';
import { statusOf, type Ensured, type Kube } from '../kube.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';
import type { TenantObject } from '../tenant-object.ts';
import { declaredTenant, type TenantRun } from '../tenant-run.ts';
import { ensuredNamespaceKey, namespaceOf, ownerReference } from './ensure-namespace.ts';

export const SECRET_NAME = 'tenant-connection';

/**
 * Ensures the Secret `tenant-connection` in the tenant's Namespace holds its connection details
 * (tenant id and slug, home region, API base URLs, storage locations); replaced only when they
 * change. A Secret the object's status names is read first, any other is created first, so a new
 * tenant's Secret costs one request; none while `ensured` remembers these details.
 */
export async function ensureSecret(kube: Kube, tenant: TenantObject, details: Record<string, string>, ensured: Ensured): Promise<undefined> {
  const namespace = namespaceOf(tenant);
  const data = Object.fromEntries(Object.entries(details).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  const digest = JSON.stringify([tenant.metadata.uid, Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1))]);
  if (ensured.get(`secret/${namespace}`) === digest) return undefined;
  const body = {
    metadata: { name: SECRET_NAME, namespace, labels: { 'app.kubernetes.io/managed-by': 'svc-platform-operator' }, ownerReferences: [ownerReference(tenant)] },
    type: 'Opaque',
    data,
  };

  /** False when there is no Secret to bring up to date. */
  const replaceIfChanged = async () => {
    try {
      const current = await kube.core.readNamespacedSecret({ name: SECRET_NAME, namespace });
      // The API server returns a Secret's keys sorted, whatever order they were written in.
      if (sameJson(current.data ?? {}, data)) return true;
      await kube.core.replaceNamespacedSecret({ name: SECRET_NAME, namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } });
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
  };
  /** False when a Secret is already there. */
  const create = async () => {
    try {
      await kube.core.createNamespacedSecret({ namespace, body });
      return true;
    } catch (error) {
      if (statusOf(error) === 409) return false;
      // The Namespace went away since it was ensured: the retry creates it again.
      if (statusOf(error) === 404) {
        ensured.delete(ensuredNamespaceKey(namespace));
        throw new Error(`the Namespace ${namespace} is missing`, { cause: error });
      }
      throw error;
    }
  };

  const written = tenant.status?.secretName === SECRET_NAME ? (await replaceIfChanged()) || (await create()) : (await create()) || (await replaceIfChanged());
  // Neither: it came or went between the two requests; the reconcile is retried.
  if (!written) throw new Error(`the Secret ${namespace}/${SECRET_NAME} changed while it was written`);
  ensured.set(`secret/${namespace}`, digest);
  return undefined;
}

/**
 * Step: the connection Secret (see `ensureSecret`), written once provisioning has ended (the
 * connection details are complete then) and named in status: `ConnectionSecretReady` True once
 * written, False (WaitingForProvisioning) before. Idempotent.
 */
export const ensureConnectionSecret: Step<TenantRun> = {
  name: 'EnsureConnectionSecret',
  async run(run) {
    const { kube, object, deps, storage, status } = run;
    const tenant = declaredTenant(run);
    if (storage) {
      const details = {
        TENANT_ID: tenant.id,
        TENANT_SLUG: tenant.slug,
        HOME_REGION: tenant.homeRegion ?? '',
        API_V4_URL: `${deps.publicUrl}/v4`,
        API_V3_URL: `${deps.publicUrl}/api/svc/v3`,
        ...Object.fromEntries(storage.map((b) => [`STORAGE_${b.backend.toUpperCase()}`, JSON.stringify(b.location)])),
      };
      await ensureSecret(kube, object, details, deps.ensured);
    }
    status.set({ secretName: storage ? SECRET_NAME : undefined });
    const generation = object.metadata.generation;
    status.condition(
      storage
        ? condition(ConditionType.ConnectionSecretReady, 'True', Reason.SecretWritten, `Secret ${namespaceOf(object)}/${SECRET_NAME} holds the connection details`, generation)
        : condition(ConditionType.ConnectionSecretReady, 'False', Reason.WaitingForProvisioning, `the connection details are complete once tenant ${tenant.slug} is provisioned`, generation),
    );
    return 'continue';
  },
};
