import { randomUUID } from 'node:crypto';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Actor } from '../identity/identity.schema.ts';
import type { Services } from '../trpc/context.ts';
import { GROUP, kubeFromConfig, TENANTS, VERSION, type Kube } from './kube.ts';
import { startLeaderElection } from './leader-election.ts';
import { reconcileTenant, type ReconcileTenantDeps } from './reconcile-tenant.ts';
import type { TenantObject } from './tenant-object.ts';

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  services: Services;
  publicUrl: string;
  /** Namespace and name of the leader-election Lease. */
  namespace?: string;
  leaseName?: string;
  identity?: string;
  /** How often every Tenant is listed again, to catch missed watch events. */
  resyncMs?: number;
  /** Tenants reconciled at once. */
  concurrency?: number;
  log?: (message: string) => void;
}

export interface RunningOperator {
  isLeader(): boolean;
  stop(): Promise<void>;
}

const TENANTS_PATH = `/apis/${GROUP}/${VERSION}/${TENANTS}`;

/** Records an Event on a Tenant; failures to record are logged, never fatal. */
function eventRecorder(kube: Kube, namespace: string, identity: string, log: (m: string) => void): ReconcileTenantDeps['event'] {
  return async (tenant, type, reason, message) => {
    const now = new Date();
    try {
      await kube.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${tenant.metadata.name}.`, namespace },
          involvedObject: { apiVersion: tenant.apiVersion, kind: 'Tenant', name: tenant.metadata.name, uid: tenant.metadata.uid },
          type,
          reason,
          message,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          source: { component: 'svc-platform-operator' },
          reportingComponent: 'svc-platform-operator',
          reportingInstance: identity,
        },
      });
    } catch (error) {
      log(`could not record event ${reason} on ${tenant.metadata.name}: ${(error as Error).message}`);
    }
  };
}

/**
 * The operator: while it holds the leader Lease it watches Tenant objects (and lists them again
 * every `resyncMs`), and reconciles each through a queue that never runs one object twice at once.
 * A failed reconcile is retried with backoff; a watch that ends is started again.
 */
export function startOperator(options: OperatorOptions): RunningOperator {
  const log = options.log ?? (() => {});
  const kube = kubeFromConfig(options.kubeConfig);
  const namespace = options.namespace ?? 'default';
  const identity = options.identity ?? `operator-${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 8;
  const system = (tenantId: string): Actor => ({ userId: '', email: '', tenantId, tenantSlug: '', roles: [], permissions: new Set() });
  const deps: ReconcileTenantDeps = {
    kube,
    tenants: options.services.tenants,
    storageStatus: (tenantId) => options.services.storage.status(system(tenantId)),
    publicUrl: options.publicUrl,
    // Events about cluster-scoped objects belong in the `default` namespace (the API server insists).
    event: eventRecorder(kube, 'default', identity, log),
  };

  const due = new Map<string, number>();
  const running = new Set<string>();
  const failures = new Map<string, number>();
  let leading = false;
  let abortWatch: AbortController | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  let pumpTimer: NodeJS.Timeout | undefined;

  const enqueue = (name: string, delayMs = 0) => {
    const at = Date.now() + delayMs;
    const current = due.get(name);
    if (current === undefined || at < current) due.set(name, at);
  };

  async function reconcileByName(name: string): Promise<void> {
    running.add(name);
    try {
      const object = (await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS, name })) as TenantObject;
      const result = await reconcileTenant(deps, object);
      failures.delete(name);
      if (result) enqueue(name, result.requeueAfterMs);
    } catch (error) {
      if ((error as { code?: number }).code === 404) return;
      const attempt = (failures.get(name) ?? 0) + 1;
      failures.set(name, attempt);
      log(`reconcile ${name} failed (attempt ${attempt}): ${(error as Error).message}`);
      enqueue(name, Math.min(30_000, 250 * 2 ** attempt));
    } finally {
      running.delete(name);
    }
  }

  function pump(): void {
    if (!leading) return;
    const now = Date.now();
    for (const [name, at] of due) {
      if (running.size >= concurrency) break;
      if (at > now || running.has(name)) continue;
      due.delete(name);
      void reconcileByName(name).then(pump);
    }
  }

  async function resync(): Promise<void> {
    try {
      const list = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: TENANTS })) as { items: TenantObject[] };
      for (const item of list.items) enqueue(item.metadata.name);
    } catch (error) {
      log(`resync failed: ${(error as Error).message}`);
    }
  }

  async function watch(): Promise<void> {
    if (!leading) return;
    try {
      abortWatch = await new Watch(options.kubeConfig).watch(
        TENANTS_PATH,
        {},
        (_phase, object: TenantObject) => enqueue(object.metadata.name),
        () => {
          if (leading) setTimeout(() => void watch(), 1_000).unref();
        },
      );
    } catch (error) {
      log(`watch failed: ${(error as Error).message}`);
      if (leading) setTimeout(() => void watch(), 1_000).unref();
    }
  }

  const election = startLeaderElection(kube, {
    namespace,
    name: options.leaseName ?? 'svc-platform-operator',
    identity,
    log,
    onStartedLeading: () => {
      leading = true;
      log(`${identity} leads; reconciling Tenants`);
      void resync();
      void watch();
      resyncTimer = setInterval(() => void resync(), options.resyncMs ?? 30_000);
      pumpTimer = setInterval(pump, 100);
    },
    onStoppedLeading: () => {
      leading = false;
      abortWatch?.abort();
      clearInterval(resyncTimer);
      clearInterval(pumpTimer);
      log(`${identity} stopped leading`);
    },
  });

  return {
    isLeader: () => leading,
    async stop() {
      await election.stop();
      while (running.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}
