import type { KubeConfig } from '@kubernetes/client-node';
import type { CustomObject } from '../custom-object.ts';
import type { Kube } from '../kube.ts';
import { startLeaderElection } from '../leader-election.ts';
import { createBackoff } from './backoff.ts';
import { createEchoSuppression, settled } from './echo-suppression.ts';
import { createFollowers } from './followers.ts';
import { queueKey, type ControlledKind, type FollowedChanges } from './kind.ts';
import { createObjectCache } from './object-cache.ts';
import { createKeyReconciler } from './reconcile-key.ts';
import { keepWatching, watchOf } from './watch.ts';
import { createWorkQueue } from './work-queue.ts';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  kube: Kube;
  kinds: readonly ControlledKind[];
  /** The leader-election Lease and this replica's identity. */
  election: { namespace: string; name: string; identity: string };
  /** How often every object is listed again and reconciled in the background, to catch missed events. */
  resyncMs: number;
  /** Objects reconciled at once, over all kinds. */
  concurrency: number;
  /** Changes outside Kubernetes that objects follow; without them, objects waiting for one are polled. */
  followed?: FollowedChanges;
  log: (message: string) => void;
}

export interface RunningController {
  isLeader(): boolean;
  /** `kubernetes` is `ok` while the leader-election loop hears from the API server; `leader` is informational. */
  health(): { kubernetes: 'ok' | 'unreachable'; leader: 'leading' | 'standby' };
  stop(): Promise<void>;
}

/** How long a stopping controller waits for its running reconciles before it gives up the lease. */
const STOP_DRAIN_MS = 10_000;
/** The election loop asks the API server every 2 s; several missed answers in a row mean it is gone. */
const UNREACHABLE_AFTER_MS = 10_000;

/**
 * A controller for the declared kinds: while it holds the leader Lease it watches each kind
 * (watches that end are started again) and lists it again every `resyncMs`, and reconciles each
 * object through one queue that never runs an object twice at once. Watch events the controller
 * caused itself are ignored; a failed reconcile is retried with backoff; a followed change
 * (`followed`) looks at the objects that follow it at once.
 */
export function startController(options: ControllerOptions): RunningController {
  const { kinds, log } = options;
  const cache = createObjectCache();
  const echo = createEchoSuppression();
  const followers = createFollowers();
  let notified = false;
  let leading = false;
  const queue = createWorkQueue({
    concurrency: options.concurrency,
    run: createKeyReconciler({ kube: options.kube, kinds, cache, echo, backoff: createBackoff(), follow: followers.follow, notified: () => notified, log }),
  });

  // A followed change: what follows it is looked at now, not at its next poll. After the source
  // reconnects, everything that follows anything is looked at again, like a re-list (in the
  // background, so that new objects go first).
  const subscription = options.followed
    ?.subscribe(
      (topic) => {
        if (leading) for (const key of followers.of(topic)) queue.add(key);
      },
      () => {
        if (leading) for (const key of followers.all()) queue.add(key, { background: true });
      },
    )
    .then((running) => ((notified = true), running))
    .catch((error: unknown) => {
      log(`${options.followed!.name} are unavailable, polling only: ${(error as Error).message}`);
      return undefined;
    });

  async function resync(): Promise<void> {
    for (const kind of kinds) kind.resync?.();
    for (const kind of kinds) {
      try {
        const list = (await options.kube.custom.listClusterCustomObject({ group: kind.group, version: kind.version, plural: kind.plural })) as { items: CustomObject[] };
        // The list may be older than the watch events already seen, so it leaves the cache alone.
        for (const item of list.items) queue.add(queueKey(kind, item.metadata.name), { background: settled(item) });
      } catch (error) {
        log(`resync of ${kind.plural} failed: ${(error as Error).message}`);
      }
    }
  }

  const watch = (kind: ControlledKind) =>
    keepWatching(
      watchOf(options.kubeConfig),
      `/apis/${kind.group}/${kind.version}/${kind.plural}`,
      (phase, object) => {
        const key = queueKey(kind, object.metadata.name);
        cache.observe(key, phase, object);
        kind.observe?.(object.metadata.name, phase === 'DELETED' ? undefined : object);
        if (echo.needsReconcile(key, object)) queue.add(key);
      },
      { name: kind.plural, log },
    );

  let watches: { stop(): void }[] = [];
  let resyncTimer: NodeJS.Timeout | undefined;
  const { identity } = options.election;
  const election = startLeaderElection(options.kube, {
    ...options.election,
    log,
    onStartedLeading: () => {
      leading = true;
      log(`${identity} leads; reconciling ${kinds.map((k) => `${k.kind}s`).join(' and ')}`);
      queue.setOpen(true);
      void resync();
      watches = kinds.map(watch);
      resyncTimer = setInterval(() => void resync(), options.resyncMs);
    },
    onStoppedLeading: () => {
      leading = false;
      for (const running of watches) running.stop();
      watches = [];
      // Another replica acts meanwhile: what this one saw is no guide when it leads again.
      cache.clear();
      echo.clear();
      for (const kind of kinds) kind.forget?.();
      clearInterval(resyncTimer);
      queue.setOpen(false);
      log(`${identity} stopped leading`);
    },
  });

  return {
    isLeader: () => leading,
    health: () => ({
      kubernetes: Date.now() - election.lastAnswerAt() < UNREACHABLE_AFTER_MS ? 'ok' : 'unreachable',
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
      await (await subscription)?.stop();
      await drained();
    },
  };
}
