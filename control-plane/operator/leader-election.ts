import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { statusOf, type Kube } from './kube.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** This replica's identity (e.g. pod name and a random suffix). */
  identity: string;
  leaseDurationSeconds?: number;
  renewEveryMs?: number;
  /**
   * How long a leader goes on without a renewal before it stops acting, by its own clock (default
   * two thirds of the lease): a renewal that hangs must not leave it acting after the lease ran out.
   */
  renewDeadlineMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  log?: (message: string) => void;
}

/** Waits for `promise`, or `ms` at most. */
const within = (ms: number, promise: Promise<unknown>) =>
  Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);

/**
 * Leader election on a `coordination.k8s.io` Lease: a replica acquires the lease when it is free
 * or expired (unrenewed for a lease duration, by its own clock), renews it while it leads, and steps down when a renewal fails or another holder
 * took over, or when no renewal succeeded within the renew deadline (a request that hangs). Writes
 * carry the resourceVersion they read, so two replicas can never both win.
 */
export function startLeaderElection(kube: Kube, options: LeaderElectionOptions): { stop(): Promise<void>; lastAnswerAt(): number } {
  const duration = options.leaseDurationSeconds ?? 15;
  const every = options.renewEveryMs ?? 2_000;
  const renewDeadline = options.renewDeadlineMs ?? Math.floor((duration * 1000 * 2) / 3);
  let leading = false;
  /** Local time at which the last successful acquisition or renewal was sent. */
  let renewedAt = 0;
  let stopped = false;
  /** When the API server last answered this loop (a refusal is an answer too); 0 before it did. */
  let answeredAt = 0;
  /**
   * The lease record (holder and renew time) last read, and when it was first read, by this
   * replica's clock: another holder's lease has expired when its record has not changed for a lease
   * duration, whatever that holder's clock says (as client-go judges it).
   */
  let observed = { record: '', at: 0 };

  const setLeading = (value: boolean) => {
    if (value === leading) return;
    leading = value;
    if (value) options.onStartedLeading();
    else options.onStoppedLeading();
  };

  /** Leads after a write that succeeded in time; one answered after the deadline waits for the next round. */
  const wrote = (sentAt: number) => {
    if (stopped || Date.now() - sentAt > renewDeadline) return;
    renewedAt = sentAt;
    setLeading(true);
  };

  async function attempt(): Promise<void> {
    const sentAt = Date.now();
    const now = new V1MicroTime(sentAt);
    let lease: V1Lease | undefined;
    try {
      lease = await kube.coordination.readNamespacedLease({ name: options.name, namespace: options.namespace });
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
    answeredAt = Date.now();
    // Stopped while reading: a lease taken now would be held by nobody until it expires.
    if (stopped) return;
    if (!lease) {
      await kube.coordination.createNamespacedLease({
        namespace: options.namespace,
        body: {
          metadata: { name: options.name, namespace: options.namespace },
          spec: { holderIdentity: options.identity, leaseDurationSeconds: duration, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        },
      });
      wrote(sentAt);
      return;
    }
    const spec = lease.spec ?? {};
    const time = (value: Date | undefined) => (value ? new Date(value).toISOString() : '');
    const record = JSON.stringify([spec.holderIdentity, time(spec.renewTime), time(spec.acquireTime), spec.leaseDurationSeconds, spec.leaseTransitions]);
    if (record !== observed.record) observed = { record, at: answeredAt };
    const expired = !spec.holderIdentity || observed.at + (spec.leaseDurationSeconds ?? duration) * 1000 < Date.now();
    const mine = spec.holderIdentity === options.identity;
    if (!mine && !expired) {
      setLeading(false);
      return;
    }
    await kube.coordination.replaceNamespacedLease({
      name: options.name,
      namespace: options.namespace,
      body: {
        ...lease,
        spec: {
          ...spec,
          holderIdentity: options.identity,
          leaseDurationSeconds: duration,
          renewTime: now,
          ...(mine ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
        },
      },
    });
    wrote(sentAt);
  }

  const deadlineWatch = setInterval(() => {
    if (leading && Date.now() - renewedAt > renewDeadline) {
      options.log?.(`leader election: no renewal within ${renewDeadline} ms; stepping down`);
      setLeading(false);
    }
  }, Math.min(every, 500));
  deadlineWatch.unref();

  const loop = (async () => {
    while (!stopped) {
      try {
        await attempt();
      } catch (error) {
        // A conflict means another replica wrote first; any failure to renew means stepping down.
        if (statusOf(error) !== undefined) answeredAt = Date.now();
        if (statusOf(error) !== 409) options.log?.(`leader election: ${(error as Error).message}`);
        setLeading(false);
      }
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  })();

  return {
    lastAnswerAt: () => answeredAt,
    async stop() {
      stopped = true;
      clearInterval(deadlineWatch);
      // Stops acting at once: while this replica waits below, another may take the lease.
      setLeading(false);
      // A request that hangs must not hold up shutdown: each wait ends at the renew deadline.
      await within(renewDeadline, loop);
      // Released only while this replica holds it; the write carries the version read, so a lease
      // another replica took meanwhile is left alone. Not released, it expires on its own.
      const release = async () => {
        const lease = await kube.coordination.readNamespacedLease({ name: options.name, namespace: options.namespace });
        if (lease.spec?.holderIdentity !== options.identity) return;
        await kube.coordination.replaceNamespacedLease({
          name: options.name,
          namespace: options.namespace,
          body: { ...lease, spec: { ...lease.spec, holderIdentity: undefined, renewTime: undefined } },
        });
      };
      await within(renewDeadline, release()).catch(() => {});
    },
  };
}
