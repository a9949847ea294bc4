import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, mergePatch, statusOf, TENANTS, VERSION, type Kube } from '../../control-plane/operator/kube.ts';
import type { TenantObject } from '../../control-plane/operator/tenant-object.ts';

const TENANTS_PATH = `/apis/${GROUP}/${VERSION}/${TENANTS}`;
const MANAGED_NAMESPACES = 'app.kubernetes.io/managed-by=svc-platform-operator';

/** A root Tenant in region `eu`, named after its slug (as the operator tests declare them). */
export function tenantObject(slug: string): Omit<TenantObject, 'metadata'> & { metadata: { name: string } } {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Tenant',
    metadata: { name: slug },
    spec: { name: `Bench ${slug}`, slug, homeRegion: 'eu', domains: [`${slug}.example`] },
  };
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Creates the Tenants, at most `concurrency` requests at once; returns when each create was sent (epoch ms), by name. */
export async function createTenants(kube: Kube, slugs: readonly string[], concurrency: number): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  await mapLimit(slugs, concurrency, async (slug) => {
    sentAt.set(slug, Date.now());
    await kube.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS, body: tenantObject(slug) });
  });
  return sentAt;
}

const isReady = (object: TenantObject) => object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export interface ReadinessWatch {
  /** When each Tenant was first seen with condition Ready=True (epoch ms, on arrival of the watch event), by name. */
  readyAt: Map<string, number>;
  /** Resolves once every named Tenant has been seen Ready; rejects after `timeoutMs` with how many are missing. */
  untilReady(names: readonly string[], timeoutMs: number, label: string): Promise<void>;
  stop(): void;
}

/**
 * Follows every Tenant through one watch (resumed from the last resourceVersion when the server or
 * the client's inactivity timeout ends it, listed afresh when that version is gone), so waiting
 * for a thousand objects costs one stream, not a request per object.
 */
export async function watchReadiness(kubeConfig: KubeConfig, kube: Kube, log: (message: string) => void): Promise<ReadinessWatch> {
  const readyAt = new Map<string, number>();
  let waiters: Array<() => void> = [];
  let resourceVersion = '';
  let abort: AbortController | undefined;
  let stopped = false;

  const observe = (object: TenantObject) => {
    if (isReady(object) && !readyAt.has(object.metadata.name)) {
      readyAt.set(object.metadata.name, Date.now());
      for (const wake of waiters) wake();
    }
  };

  const list = async () => {
    const listed = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS })) as {
      items: TenantObject[];
      metadata: { resourceVersion: string };
    };
    listed.items.forEach(observe);
    resourceVersion = listed.metadata.resourceVersion;
  };

  const follow = async (): Promise<void> => {
    if (stopped) return;
    let gone = false;
    abort = await new Watch(kubeConfig).watch(
      TENANTS_PATH,
      { resourceVersion, allowWatchBookmarks: true },
      (phase, object: TenantObject & { code?: number }) => {
        if (phase === 'ERROR') {
          gone = object.code === 410;
          return;
        }
        if (object.metadata?.resourceVersion) resourceVersion = object.metadata.resourceVersion;
        if (phase !== 'BOOKMARK' && phase !== 'DELETED') observe(object);
      },
      (error: unknown) => {
        if (stopped) return;
        const restart = async () => {
          try {
            if (gone || statusOf(error) === 410) await list();
            await follow();
          } catch (failure) {
            log(`tenant watch: ${(failure as Error).message}; retrying`);
            setTimeout(() => void restart(), 1_000);
          }
        };
        void restart();
      },
    );
  };

  await list();
  await follow();

  return {
    readyAt,
    untilReady(names, timeoutMs, label) {
      return new Promise((resolve, reject) => {
        const missing = () => names.filter((n) => !readyAt.has(n)).length;
        const done = () => {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== check);
        };
        const check = () => {
          if (missing() > 0) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${label}: ${missing()} of ${names.length} Tenants were not Ready within ${Math.round(timeoutMs / 1000)} s (BENCH_OPERATOR_TIMEOUT_SECONDS raises the limit)`));
        }, timeoutMs);
        waiters.push(check);
        check();
      });
    },
    stop() {
      stopped = true;
      abort?.abort();
    },
  };
}

/** Waits until the API server serves Tenants: just after the CRD is established it answers 429 for a moment. */
export async function untilTenantsServed(kube: Kube, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS, limit: 1 });
      return;
    } catch (error) {
      if (Date.now() > deadline || ![404, 429, 503].includes(statusOf(error) ?? 0)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Removes every Tenant (finalizers dropped first: no operator runs meanwhile) and every Namespace
 * the operator made, with its Secrets. The API server has no controller manager, so nothing
 * else would: a Namespace is finalized here, after its Secrets are gone. Returns the counts.
 */
export async function clearTenants(kube: Kube): Promise<{ tenants: number; namespaces: number }> {
  const listed = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS })) as { items: TenantObject[] };
  await mapLimit(listed.items, 32, async (tenant) => {
    if (!tenant.metadata.finalizers?.length) return;
    try {
      await kube.custom.patchClusterCustomObject(
        { group: GROUP, version: VERSION, plural: TENANTS, name: tenant.metadata.name, body: { metadata: { finalizers: null } } },
        mergePatch,
      );
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  });
  if (listed.items.length) await kube.custom.deleteCollectionClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS });

  const namespaces = await kube.core.listNamespace({ labelSelector: MANAGED_NAMESPACES });
  await mapLimit(namespaces.items, 32, async (namespace) => {
    const name = namespace.metadata!.name!;
    try {
      await kube.core.deleteCollectionNamespacedSecret({ namespace: name });
      if (!namespace.metadata?.deletionTimestamp) await kube.core.deleteNamespace({ name });
      const current = await kube.core.readNamespace({ name });
      await kube.core.replaceNamespaceFinalize({ name, body: { ...current, spec: { ...current.spec, finalizers: [] } } });
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  });
  return { tenants: listed.items.length, namespaces: namespaces.items.length };
}
