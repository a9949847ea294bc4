import { randomUUID } from 'node:crypto';
import type { CoordinationV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { kubeFromConfig, loadKubeConfig, type Kube } from '../../control-plane/operator/kube.ts';
import { startLeaderElection } from '../../control-plane/operator/leader-election.ts';
import { until } from '../harness/until.ts';

/** Leader election against the real API server, with one fault injected: a renewal that never answers. */
describe('leader election', () => {
  const kube = kubeFromConfig(loadKubeConfig(inject('kubeconfigPath')));

  it('steps down when no renewal succeeds within the renew deadline, though the request never fails', async () => {
    let hang = false;
    // The real client, except that once `hang` is set a lease replacement never answers.
    const hanging: Kube = {
      ...kube,
      coordination: new Proxy(kube.coordination, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (name !== 'replaceNamespacedLease' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return (...args: unknown[]) => (hang ? new Promise(() => {}) : value.apply(target, args));
        },
      }) as CoordinationV1Api,
    };
    const changes: string[] = [];
    const election = startLeaderElection(hanging, {
      namespace: 'default',
      name: `election-${randomUUID().slice(0, 8)}`,
      identity: 'replica-a',
      leaseDurationSeconds: 3,
      renewEveryMs: 200,
      renewDeadlineMs: 1_000,
      onStartedLeading: () => changes.push('started'),
      onStoppedLeading: () => changes.push('stopped'),
    });
    await until(async () => changes, (seen) => seen.includes('started'), 10_000);
    // Renewals go on while they answer.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(changes).toEqual(['started']);

    hang = true;
    const hungAt = Date.now();
    await until(async () => changes, (seen) => seen.includes('stopped'), 10_000);
    expect(changes).toEqual(['started', 'stopped']);
    // Before the 3 s lease runs out, when another replica could take it.
    expect(Date.now() - hungAt).toBeLessThan(3_000);
    void election.stop();
  });
});
