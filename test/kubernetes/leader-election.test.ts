import { randomUUID } from 'node:crypto';
import { V1MicroTime } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { kubeFromConfig, loadKubeConfig, type Kube } from '../../control-plane/operator/kube.ts';
import { startLeaderElection } from '../../control-plane/operator/leader-election.ts';
import { until } from '../harness/until.ts';

/** Leader election against the real API server, with one fault injected: a renewal that never answers. */
describe('leader election', () => {
  const kube = kubeFromConfig(loadKubeConfig(inject('kubeconfigPath')));

  /** The real client, except that once `hang()` is called a lease replacement never answers. */
  function hangingClient(): { client: Kube; hang(): void } {
    let hanging = false;
    const client: Kube = {
      ...kube,
      coordination: new Proxy(kube.coordination, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (name !== 'replaceNamespacedLease' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return (...args: unknown[]) => (hanging ? new Promise(() => {}) : value.apply(target, args));
        },
      }),
    };
    return { client, hang: () => (hanging = true) };
  }

  /** A replica on the Lease `name` in `default`, renewing every 200 ms, that reports each change of its leadership to `record`. */
  const replica = (
    client: Kube,
    lease: { name: string; identity: string; leaseDurationSeconds: number; renewDeadlineMs?: number },
    record: (change: 'started' | 'stopped') => void,
  ) =>
    startLeaderElection(client, {
      namespace: 'default',
      renewEveryMs: 200,
      ...lease,
      onStartedLeading: () => record('started'),
      onStoppedLeading: () => record('stopped'),
    });

  /** Replica a on a fresh 3 s lease (renewed every 200 ms, 1 s deadline) through `hangingClient`, once it leads. */
  async function leadingWithHangingClient() {
    const { client, hang } = hangingClient();
    const name = `election-${randomUUID().slice(0, 8)}`;
    const changes: string[] = [];
    const election = replica(client, { name, identity: 'replica-a', leaseDurationSeconds: 3, renewDeadlineMs: 1_000 }, (change) => changes.push(`a ${change}`));
    await until(async () => changes, (seen) => seen.includes('a started'), 10_000);
    return { election, changes, hang, name };
  }

  it('steps down when no renewal succeeds within the renew deadline, though the request never fails, before another replica can take the lease', async () => {
    const { election, changes, hang, name } = await leadingWithHangingClient();
    // Renewals go on while they answer.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(changes).toEqual(['a started']);

    hang();
    // Replica b takes the lease once it has gone unrenewed for its 3 s: a must have stopped acting by then.
    const b = replica(kube, { name, identity: 'replica-b', leaseDurationSeconds: 3 }, (change) => changes.push(`b ${change}`));
    try {
      await until(async () => changes, (seen) => seen.includes('b started'), 15_000);
      expect(changes).toEqual(['a started', 'a stopped', 'b started']);
      expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });
    } finally {
      await election.stop();
      await b.stop();
    }
    expect(changes).toEqual(['a started', 'a stopped', 'b started', 'b stopped']);
  });

  it('stops acting as soon as it is stopped, and does not wait for a renewal that hangs', async () => {
    const { election, changes, hang } = await leadingWithHangingClient();
    hang();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopping = election.stop();
    // Before any wait: the renewal in flight may never answer.
    expect(changes).toEqual(['a started', 'a stopped']);
    await stopping;
    expect(changes).toEqual(['a started', 'a stopped']);
  });

  it('releases its lease when stopped, so that another replica leads at once', async () => {
    const name = `election-${randomUUID().slice(0, 8)}`;
    const changes: string[] = [];
    // A lease far longer than the wait for b below: b leads because the lease was released, not because it ran out.
    const elect = (identity: string) => replica(kube, { name, identity, leaseDurationSeconds: 60 }, (change) => changes.push(`${identity} ${change}`));
    const a = elect('replica-a');
    await until(async () => changes, (seen) => seen.includes('replica-a started'), 10_000);
    const b = elect('replica-b');
    await a.stop();
    expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec?.holderIdentity).toBeUndefined();
    await until(async () => changes, (seen) => seen.includes('replica-b started'), 15_000);
    expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });
    expect(changes).toEqual(['replica-a started', 'replica-a stopped', 'replica-b started']);
    await b.stop();
  });

  it("judges another holder's lease by its own clock: a holder whose clock is behind keeps it while it renews", async () => {
    const name = `election-${randomUUID().slice(0, 8)}`;
    const hourAgo = () => new V1MicroTime(Date.now() - 3_600_000);
    // Another replica whose clock runs an hour behind: every renewal it writes looks long expired.
    await kube.coordination.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name, namespace: 'default' }, spec: { holderIdentity: 'replica-behind', leaseDurationSeconds: 3, acquireTime: hourAgo(), renewTime: hourAgo() } },
    });
    let renewing = true;
    // Its failure (an API server blip) fails the test where it is awaited, not as an unhandled rejection.
    const renewals = (async () => {
      while (renewing) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const lease = await kube.coordination.readNamespacedLease({ name, namespace: 'default' });
        if (lease.spec?.holderIdentity !== 'replica-behind') return;
        await kube.coordination.replaceNamespacedLease({ name, namespace: 'default', body: { ...lease, spec: { ...lease.spec, renewTime: hourAgo() } } });
      }
    })();
    const renewed = renewals.then(() => undefined, (error: unknown) => error);

    const changes: string[] = [];
    const election = replica(kube, { name, identity: 'replica-a', leaseDurationSeconds: 3 }, (change) => changes.push(change));
    try {
      // Longer than the lease: the holder renews all along, so it is not taken over.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(changes).toEqual([]);
      expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec?.holderIdentity).toBe('replica-behind');

      // The holder stops renewing: a lease duration later the lease is taken over.
      renewing = false;
      expect(await renewed).toBeUndefined();
      // Not at once: the record it last wrote is new to this replica's clock.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(changes).toEqual([]);
      expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec?.holderIdentity).toBe('replica-behind');
      await until(async () => changes, (seen) => seen.includes('started'), 10_000);
      expect((await kube.coordination.readNamespacedLease({ name, namespace: 'default' })).spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 1 });
    } finally {
      renewing = false;
      await renewed;
      await election.stop();
    }
  });
});
