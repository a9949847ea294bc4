import { randomUUID } from 'node:crypto';
import { Watch, type CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { systemActor } from '../identity/system-actor.ts';
import type { Services } from '../services.ts';
import { clearTenantConditions, reconcileDuration, recordTenantConditions } from '../telemetry/metrics.ts';
import { childSlugOf, type AppObject } from './app-object.ts';
import type { CustomObject, StepResult } from './custom-object.ts';
import { APPS, GROUP, kubeFromConfig, statusOf, TENANTS, VERSION, type Ensured, type Kube } from './kube.ts';
import { startLeaderElection } from './leader-election.ts';
import { createWorkQueue } from './work-queue.ts';
import { reconcileApp } from './reconcile-app.ts';
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
  /** How often every object is listed again and reconciled in the background, to catch missed events. Default 5 minutes. */
  resyncMs?: number;
  /** Objects reconciled at once. */
  concurrency?: number;
  log?: (message: string) => void;
}

export interface RunningOperator {
  isLeader(): boolean;
  /** `kubernetes` is `ok` while the leader-election loop hears from the API server; `leader` is informational. */
  health(): { kubernetes: 'ok' | 'unreachable'; leader: 'leading' | 'standby' };
  stop(): Promise<void>;
}

/** The longest wait between two looks at an object that asked to be looked at again, or whose reconcile failed. */
const MAX_REQUEUE_MS = 30_000;
/** How long a stopping operator waits for its running reconciles before it gives up the lease. */
const STOP_DRAIN_MS = 10_000;

/** A kind the operator reconciles: its plural, how one object of it is brought to its spec (through `kube`), and the tenants (slugs) its state follows. */
interface Reconciled {
  plural: string;
  reconcile(object: CustomObject, kube: Kube): Promise<StepResult>;
  follows(object: CustomObject): string[];
}

/**
 * Whether a watched object is settled: its spec observed, its finalizer on, not being deleted.
 * Watch events about settled objects (the echo of the operator's own status writes, a re-listed
 * watch) need no reconcile; what changes on the platform's side arrives as a status notification.
 */
const settled = (object: CustomObject) =>
  !object.metadata.deletionTimestamp && object.status?.observedGeneration === object.metadata.generation && (object.metadata.finalizers?.length ?? 0) > 0;

/** What a reconcile tells the operator's copy of its object: a patch's answer, or that the object is gone. */
interface CopyKeeper {
  keep(answer: CustomObject): void;
  gone(): void;
}

/**
 * `kube`, noting in `written` the resource version of every patch of `read` it sends. A patch's
 * answer shows any change made meanwhile, so a version that carries a spec change or a deletion
 * the reconcile did not read is not noted: its watch event must still be reconciled. Each answer
 * goes to `copy`, and so does a patch refused because the object is gone.
 */
function notingWrites(kube: Kube, read: CustomObject, written: Set<string>, copy: CopyKeeper): Kube {
  const note = (answer: unknown) => {
    const metadata = (answer as Partial<CustomObject> | undefined)?.metadata;
    const unseen = metadata?.generation !== read.metadata.generation || !!metadata?.deletionTimestamp !== !!read.metadata.deletionTimestamp;
    if (metadata?.resourceVersion && !unseen) written.add(metadata.resourceVersion);
    if (metadata?.resourceVersion) copy.keep(answer as CustomObject);
    return answer;
  };
  const refused = (error: unknown) => {
    if (statusOf(error) === 404) copy.gone();
    throw error;
  };
  const custom = Object.create(kube.custom) as CustomObjectsApi;
  custom.patchClusterCustomObject = (...args: Parameters<CustomObjectsApi['patchClusterCustomObject']>) =>
    kube.custom.patchClusterCustomObject(...args).then(note, refused);
  custom.patchClusterCustomObjectStatus = (...args: Parameters<CustomObjectsApi['patchClusterCustomObjectStatus']>) =>
    kube.custom.patchClusterCustomObjectStatus(...args).then(note, refused);
  return { ...kube, custom };
}

/** Records an Event on an object; failures to record are logged, never fatal. */
function eventRecorder(kube: Kube, namespace: string, identity: string, log: (m: string) => void): ReconcileTenantDeps['event'] {
  return async (object, type, reason, message) => {
    const now = new Date();
    try {
      await kube.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${object.metadata.name}.`, namespace },
          involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, uid: object.metadata.uid },
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
      log(`could not record event ${reason} on ${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
    }
  };
}

/**
 * The operator: while it holds the leader Lease it watches Tenant and App objects (and lists them
 * again every `resyncMs`), and reconciles each through one queue that never runs an object twice at once.
 * A failed reconcile is retried with backoff; a watch that ends is started again.
 */
export function startOperator(options: OperatorOptions): RunningOperator {
  const log = options.log ?? (() => {});
  const kube = kubeFromConfig(options.kubeConfig);
  const namespace = options.namespace ?? 'default';
  const identity = options.identity ?? `operator-${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 16;
  // Events about cluster-scoped objects belong in the `default` namespace (the API server insists).
  const event = eventRecorder(kube, 'default', identity, log);
  /**
   * The newest copy of each object while the operator leads, from its watches (in order, so each
   * event is newer than the last) and the answers to its own patches, so that a reconcile needs no
   * read. An object without a copy is read. A copy is dropped when its object is gone, when a
   * reconcile of it fails (the retry reads it afresh) and when leadership ends; finalizer patches
   * carry the copy's resource version, so one made from a copy that is behind is refused.
   */
  const latest = new Map<string, CustomObject>();
  /** The Namespaces and Secrets ensured since the last resync. */
  const ensured: Ensured = new Map();
  const tenantDeps: ReconcileTenantDeps = {
    kube,
    tenants: options.services.tenants,
    storageReadiness: (tenantId) => options.services.storage.readiness(systemActor(tenantId)),
    provisionStorage: (tenantId, backends) => options.services.storage.startProvisioning(systemActor(tenantId), backends),
    publicUrl: options.publicUrl,
    ensured,
    event,
  };
  const appDeps = { kube, apps: options.services.apps, tenants: options.services.tenants, event };
  const kinds: Reconciled[] = [
    {
      plural: TENANTS,
      reconcile: (object, writer) => reconcileTenant({ ...tenantDeps, kube: writer }, object as TenantObject),
      follows: (object) => [(object as TenantObject).spec.slug],
    },
    {
      plural: APPS,
      reconcile: (object, writer) => reconcileApp({ ...appDeps, kube: writer }, object as AppObject),
      follows: ({ spec }: AppObject) => [spec.companyTenant, childSlugOf(spec)].filter((slug): slug is string => !!slug),
    },
  ];
  /** Queue entries name an object by kind and name. */
  const entry = (kind: Reconciled, name: string) => `${kind.plural}/${name}`;

  const failures = new Map<string, number>();
  /** Requeues in a row per entry: a waiting object is looked at less and less often (its notification comes first). */
  const requeues = new Map<string, number>();
  /**
   * Resource versions the operator's last reconcile of an entry wrote. A watch event carrying one
   * is the echo of that write: the reconcile already knew that state, so it needs no other look.
   */
  const ownWrites = new Map<string, Set<string>>();
  /** Whether tenant status notifications are subscribed to (else waiting objects are polled). */
  let notified = false;
  /** Queue entries of the objects whose state follows a tenant, by the tenant's slug. */
  const followers = new Map<string, Set<string>>();
  let leading = false;
  let resyncTimer: NodeJS.Timeout | undefined;

  async function reconcileEntry(key: string): Promise<void> {
    const [plural, name] = key.split('/') as [string, string];
    const kind = kinds.find((k) => k.plural === plural)!;
    let object: CustomObject;
    try {
      object = latest.get(key) ?? ((await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural, name })) as CustomObject);
    } catch (error) {
      if (statusOf(error) === 404) {
        requeues.delete(key);
        ownWrites.delete(key);
        return;
      }
      return retry(key, error);
    }
    try {
      for (const slug of kind.follows(object)) followers.set(slug, (followers.get(slug) ?? new Set()).add(key));
      const written = new Set<string>();
      ownWrites.set(key, written);
      const copy: CopyKeeper = {
        // An answer replaces the copy only if nothing newer than what this reconcile wrote came
        // meanwhile (a copy dropped meanwhile stays dropped). One that lets a deleted object go
        // (its last finalizer removed) leaves no copy: the object is gone.
        keep(answer) {
          if (answer.metadata.deletionTimestamp && !answer.metadata.finalizers?.length) return void latest.delete(key);
          const current = latest.get(key)?.metadata.resourceVersion;
          if (current !== undefined && (current === object.metadata.resourceVersion || written.has(current))) latest.set(key, answer);
        },
        gone: () => latest.delete(key),
      };
      const started = performance.now();
      const result = await kind.reconcile(object, notingWrites(kube, object, written, copy)).catch((error: unknown) => {
        reconcileDuration.observe({ kind: plural, outcome: 'failed' }, (performance.now() - started) / 1000);
        throw error;
      });
      reconcileDuration.observe({ kind: plural, outcome: result ? 'requeued' : 'done' }, (performance.now() - started) / 1000);
      failures.delete(key);
      if (result) {
        const inARow = requeues.get(key) ?? 0;
        requeues.set(key, inARow + 1);
        const backedOff = Math.min(MAX_REQUEUE_MS, result.requeueAfterMs * 2 ** Math.min(inARow, 5));
        queue.add(key, { delayMs: result.untilNotified && notified ? MAX_REQUEUE_MS : backedOff });
      } else {
        requeues.delete(key);
      }
    } catch (error) {
      latest.delete(key);
      retry(key, error);
    }
  }

  /** Looks at `key` again after a failure, backing off. */
  function retry(key: string, error: unknown): void {
    const attempt = (failures.get(key) ?? 0) + 1;
    failures.set(key, attempt);
    log(`reconcile ${key} failed (attempt ${attempt}): ${(error as Error).message}`);
    queue.add(key, { delayMs: Math.min(MAX_REQUEUE_MS, 250 * 2 ** attempt) });
  }
  const queue = createWorkQueue({ concurrency, run: reconcileEntry });

  // A tenant's status changed on the platform: what follows it is looked at now, not at its next
  // poll. After the listening connection reconnects, everything that follows a tenant is looked at
  // again, like a re-list (in the background, so that new objects go first).
  const statusChanges = options.services.tenants
    .onStatusChange(
      (slug) => {
        if (leading) for (const key of followers.get(slug) ?? []) queue.add(key);
      },
      () => {
        if (leading) for (const keys of followers.values()) for (const key of keys) queue.add(key, { background: true });
      },
    )
    .then((subscription) => ((notified = true), subscription))
    .catch((error: unknown) => {
      log(`tenant status notifications are unavailable, polling only: ${(error as Error).message}`);
      return undefined;
    });

  async function resync(): Promise<void> {
    ensured.clear();
    for (const kind of kinds) {
      try {
        const list = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: kind.plural })) as { items: CustomObject[] };
        // The list may be older than the watch events already seen, so it leaves the copies alone.
        for (const item of list.items) queue.add(entry(kind, item.metadata.name), { background: settled(item) });
      } catch (error) {
        log(`resync of ${kind.plural} failed: ${(error as Error).message}`);
      }
    }
  }

  const abortWatches = new Map<Reconciled, AbortController>();
  async function watch(kind: Reconciled): Promise<void> {
    if (!leading) return;
    const again = () => {
      if (leading) setTimeout(() => void watch(kind), 1_000).unref();
    };
    try {
      const controller = await new Watch(options.kubeConfig).watch(
        `/apis/${GROUP}/${VERSION}/${kind.plural}`,
        {},
        (phase, object: CustomObject) => {
          const key = entry(kind, object.metadata.name);
          if (phase === 'DELETED') latest.delete(key);
          else latest.set(key, object);
          if (kind.plural === TENANTS) recordTenantConditions(object.metadata.name, phase === 'DELETED' ? undefined : (object.status?.conditions ?? []));
          const echo = object.metadata.resourceVersion !== undefined && ownWrites.get(key)?.has(object.metadata.resourceVersion);
          if (!settled(object) && !echo) queue.add(key);
        },
        again,
      );
      abortWatches.set(kind, controller);
    } catch (error) {
      log(`watch of ${kind.plural} failed: ${(error as Error).message}`);
      again();
    }
  }

  const election = startLeaderElection(kube, {
    namespace,
    name: options.leaseName ?? 'svc-platform-operator',
    identity,
    log,
    onStartedLeading: () => {
      leading = true;
      log(`${identity} leads; reconciling Tenants and Apps`);
      queue.setOpen(true);
      void resync();
      for (const kind of kinds) void watch(kind);
      resyncTimer = setInterval(() => void resync(), options.resyncMs ?? 300_000);
    },
    onStoppedLeading: () => {
      leading = false;
      for (const controller of abortWatches.values()) controller.abort();
      abortWatches.clear();
      // Another replica acts meanwhile: what this one saw is no guide when it leads again.
      latest.clear();
      ownWrites.clear();
      clearTenantConditions();
      clearInterval(resyncTimer);
      queue.setOpen(false);
      log(`${identity} stopped leading`);
    },
  });

  // The election loop asks the API server every 2 s; several missed answers in a row mean it is gone.
  const unreachableAfterMs = 10_000;
  return {
    isLeader: () => leading,
    health: () => ({
      kubernetes: Date.now() - election.lastAnswerAt() < unreachableAfterMs ? 'ok' : 'unreachable',
      leader: leading ? 'leading' : 'standby',
    }),
    async stop() {
      // Reconciles under way finish while this replica still holds the lease (for 10 s at most),
      // so that no other replica acts beside them.
      const drained = async (by = Infinity) => {
        while (queue.runningCount > 0 && Date.now() < by) await new Promise((resolve) => setTimeout(resolve, 50));
      };
      queue.close();
      await drained(Date.now() + STOP_DRAIN_MS);
      await election.stop();
      await (await statusChanges)?.stop();
      await drained();
    },
  };
}
