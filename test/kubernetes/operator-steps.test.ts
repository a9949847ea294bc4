import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { kubeFromConfig, loadKubeConfig, type Ensured, type Kube } from '../../control-plane/operator/kube.ts';
import { ensureNamespace, ensuredNamespaceKey, namespaceOf } from '../../control-plane/operator/steps/ensure-namespace.ts';
import { ensureSecret, SECRET_NAME } from '../../control-plane/operator/steps/ensure-secret.ts';
import type { TenantObject } from '../../control-plane/operator/tenant-object.ts';

/**
 * The operator's Namespace and Secret steps against the real API server: what each sends, and
 * that what the operator has ensured since its last resync costs no request.
 */
describe('operator steps: Namespace and connection Secret', () => {
  const kube = kubeFromConfig(loadKubeConfig(inject('kubeconfigPath')));
  const sent: string[] = [];
  // The real client, with each call it makes noted.
  const counted: Kube = {
    ...kube,
    core: new Proxy(kube.core, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          sent.push(String(name));
          return value.apply(target, args);
        };
      },
    }),
  };
  const slugs: string[] = [];
  const tenant = (status?: TenantObject['status']): TenantObject => {
    const slug = slugs[slugs.length - 1]!;
    return {
      apiVersion: 'platform.svc.dev/v1alpha1',
      kind: 'Tenant',
      metadata: { name: slug, uid: '5f0c1a5e-0000-4000-8000-000000000001', generation: 1 },
      spec: { name: slug, slug, homeRegion: 'eu' },
      ...(status ? { status } : {}),
    };
  };
  const secretData = async (object: TenantObject) => {
    const secret = await kube.core.readNamespacedSecret({ name: SECRET_NAME, namespace: namespaceOf(object) });
    return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };

  beforeEach(() => {
    slugs.push(`steps-${randomUUID().slice(0, 8)}`);
    sent.length = 0;
  });
  afterAll(async () => {
    for (const slug of slugs) await kube.core.deleteNamespace({ name: `tenant-${slug}` }).catch(() => {});
  });

  it('creates the Namespace with one request, none while remembered, one again after a resync', async () => {
    const ensured: Ensured = new Map();
    await ensureNamespace(counted, tenant(), ensured);
    expect(sent).toEqual(['createNamespace']);
    const namespace = await kube.core.readNamespace({ name: namespaceOf(tenant()) });
    expect(namespace.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Tenant', name: tenant().metadata.name, controller: true });
    expect(namespace.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'svc-platform-operator' });

    await ensureNamespace(counted, tenant(), ensured);
    expect(sent).toEqual(['createNamespace']);

    // A resync forgets; the create is refused as "already exists", which is success.
    await ensureNamespace(counted, tenant(), new Map());
    expect(sent).toEqual(['createNamespace', 'createNamespace']);
  });

  it('names the Namespace of a slug too long for `tenant-<slug>` within 63 characters, distinct per slug', async () => {
    const long = (last: string) => ({ ...tenant(), spec: { ...tenant().spec, slug: `${`${slugs.at(-1)}-${'x'.repeat(63)}`.slice(0, 61)}-${last}` } });
    const [a, b] = [long('a'), long('b')];
    expect(a.spec.slug).toHaveLength(63);
    expect(namespaceOf(a).length).toBeLessThanOrEqual(63);
    expect(namespaceOf(a)).not.toBe(namespaceOf(b));
    await ensureNamespace(counted, a, new Map());
    expect((await kube.core.readNamespace({ name: namespaceOf(a) })).metadata?.name).toBe(namespaceOf(a));
    await kube.core.deleteNamespace({ name: namespaceOf(a) });
  });

  it('forgets a Namespace that went away, so that the retry creates it again', async () => {
    // Remembered as ensured, but never made (as after someone deleted it).
    const ensured: Ensured = new Map([[ensuredNamespaceKey(namespaceOf(tenant())), tenant().metadata.uid]]);
    await expect(ensureSecret(counted, tenant(), { TENANT_ID: '1' }, ensured)).rejects.toThrow(`the Namespace ${namespaceOf(tenant())} is missing`);
    expect(ensured.has(ensuredNamespaceKey(namespaceOf(tenant())))).toBe(false);
    await ensureNamespace(counted, tenant(), ensured);
    await ensureSecret(counted, tenant(), { TENANT_ID: '1' }, ensured);
    expect(sent).toEqual(['createNamespacedSecret', 'createNamespace', 'createNamespacedSecret']);
    expect(await secretData(tenant())).toEqual({ TENANT_ID: '1' });
  });

  it('writes the Secret once, reads it when the status names it, and replaces it only when the details change', async () => {
    const ensured: Ensured = new Map();
    await ensureNamespace(kube, tenant(), ensured);
    await ensureSecret(counted, tenant(), { TENANT_SLUG: 'a', TENANT_ID: '1' }, ensured);
    expect(sent).toEqual(['createNamespacedSecret']);
    expect(await secretData(tenant())).toEqual({ TENANT_ID: '1', TENANT_SLUG: 'a' });

    // The same details in another order: nothing to send.
    await ensureSecret(counted, tenant(), { TENANT_ID: '1', TENANT_SLUG: 'a' }, ensured);
    expect(sent).toEqual(['createNamespacedSecret']);

    // After a resync, a Secret the status names is read first and left alone when it is current.
    sent.length = 0;
    const written = tenant({ secretName: SECRET_NAME });
    await ensureSecret(counted, written, { TENANT_ID: '1', TENANT_SLUG: 'a' }, new Map());
    expect(sent).toEqual(['readNamespacedSecret']);

    // Changed details replace it.
    sent.length = 0;
    await ensureSecret(counted, written, { TENANT_ID: '1', TENANT_SLUG: 'b' }, ensured);
    expect(sent).toEqual(['readNamespacedSecret', 'replaceNamespacedSecret']);
    expect(await secretData(tenant())).toEqual({ TENANT_ID: '1', TENANT_SLUG: 'b' });

    // A Secret that went away is created again; one the status does not name but exists is brought up to date.
    await kube.core.deleteNamespacedSecret({ name: SECRET_NAME, namespace: namespaceOf(tenant()) });
    sent.length = 0;
    await ensureSecret(counted, written, { TENANT_ID: '1', TENANT_SLUG: 'c' }, new Map());
    expect(sent).toEqual(['readNamespacedSecret', 'createNamespacedSecret']);
    sent.length = 0;
    await ensureSecret(counted, tenant(), { TENANT_ID: '1', TENANT_SLUG: 'd' }, new Map());
    expect(sent).toEqual(['createNamespacedSecret', 'readNamespacedSecret', 'replaceNamespacedSecret']);
    expect(await secretData(tenant())).toEqual({ TENANT_ID: '1', TENANT_SLUG: 'd' });
  });
});
