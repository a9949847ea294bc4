import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CustomObject } from '../custom-object.ts';
import { keepWatching, type StartWatch } from './watch.ts';

const object = (name: string) => ({ metadata: { name } }) as CustomObject;

/** Watches started through the seam, each with its `done` and whether it was aborted; `refuse` makes the next start fail. */
function fakeWatches() {
  const started: { path: string; emit(phase: string, object: CustomObject): void; done(error?: unknown): void; aborted: boolean }[] = [];
  let refuse: Error | undefined;
  const startWatch: StartWatch = (path, onEvent, done) => {
    if (refuse) {
      const error = refuse;
      refuse = undefined;
      return Promise.reject(error);
    }
    const watch = { path, emit: onEvent, done, aborted: false };
    started.push(watch);
    return Promise.resolve({ abort: () => void (watch.aborted = true) });
  };
  return { started, startWatch, refuseNext: (error: Error) => void (refuse = error) };
}

describe('keepWatching', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('passes the events on and starts a watch that ended again a second later', async () => {
    const { started, startWatch } = fakeWatches();
    const seen: string[] = [];
    const running = keepWatching(startWatch, '/apis/platform.svc.dev/v1alpha1/tenants', (phase, o) => seen.push(`${phase} ${o.metadata.name}`), { name: 'tenants', log: () => {} });
    await vi.advanceTimersByTimeAsync(0);
    expect(started.map((w) => w.path)).toEqual(['/apis/platform.svc.dev/v1alpha1/tenants']);
    started[0]!.emit('ADDED', object('acme'));
    started[0]!.done();
    await vi.advanceTimersByTimeAsync(999);
    expect(started).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toHaveLength(2);
    started[1]!.emit('MODIFIED', object('acme'));
    expect(seen).toEqual(['ADDED acme', 'MODIFIED acme']);
    running.stop();
  });

  it('starts a watch that ended with an error, or failed to start, again, and logs the failure to start', async () => {
    const { started, startWatch, refuseNext } = fakeWatches();
    const log: string[] = [];
    refuseNext(new Error('connection refused'));
    const running = keepWatching(startWatch, '/apis/platform.svc.dev/v1alpha1/apps', () => {}, { name: 'apps', log: (m) => log.push(m) });
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(0);
    expect(log).toEqual(['watch of apps failed: connection refused']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(started).toHaveLength(1);
    started[0]!.done(new Error('stream reset'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(started).toHaveLength(2);
    running.stop();
  });

  it('stops: the current watch is aborted and one that ends afterwards is not started again', async () => {
    const { started, startWatch } = fakeWatches();
    const running = keepWatching(startWatch, '/apis/platform.svc.dev/v1alpha1/tenants', () => {}, { name: 'tenants', log: () => {} });
    await vi.advanceTimersByTimeAsync(0);
    running.stop();
    expect(started[0]!.aborted).toBe(true);
    started[0]!.done();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toHaveLength(1);
  });

  it('aborts a watch that finishes starting after it was stopped', async () => {
    const { started, startWatch } = fakeWatches();
    const running = keepWatching(startWatch, '/apis/platform.svc.dev/v1alpha1/tenants', () => {}, { name: 'tenants', log: () => {} });
    running.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(1);
    expect(started[0]!.aborted).toBe(true);
  });
});
