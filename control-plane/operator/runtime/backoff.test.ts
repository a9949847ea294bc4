import { describe, expect, it } from 'vitest';
import { createBackoff, MAX_REQUEUE_MS } from './backoff.ts';

describe('controller backoff', () => {
  it('waits twice as long after each failure in a row, up to the maximum, per key', () => {
    const backoff = createBackoff();
    expect([1, 2, 3].map(() => backoff.failed('tenants/a'))).toEqual([
      { attempt: 1, delayMs: 500 },
      { attempt: 2, delayMs: 1_000 },
      { attempt: 3, delayMs: 2_000 },
    ]);
    expect(backoff.failed('tenants/b')).toEqual({ attempt: 1, delayMs: 500 });
    for (let i = 0; i < 10; i++) backoff.failed('tenants/a');
    expect(backoff.failed('tenants/a')).toEqual({ attempt: 14, delayMs: MAX_REQUEUE_MS });
  });

  it('doubles a requeue delay with each requeue in a row, at most 32 times and up to the maximum', () => {
    const backoff = createBackoff(1_000_000);
    const delays = Array.from({ length: 8 }, () => backoff.requeued('apps/x', { requeueAfterMs: 100 }, false));
    expect(delays).toEqual([100, 200, 400, 800, 1_600, 3_200, 3_200, 3_200]);
    expect(createBackoff().requeued('apps/y', { requeueAfterMs: 40_000 }, false)).toBe(MAX_REQUEUE_MS);
  });

  it('waits the most for a change it will be notified of, and polls when notifications are unavailable', () => {
    const backoff = createBackoff();
    expect(backoff.requeued('apps/x', { requeueAfterMs: 5_000, untilNotified: true }, true)).toBe(MAX_REQUEUE_MS);
    expect(backoff.requeued('apps/y', { requeueAfterMs: 5_000, untilNotified: true }, false)).toBe(5_000);
  });

  it('starts afresh after a success, a requeue ending the failures and a reset ending both', () => {
    const backoff = createBackoff();
    backoff.failed('tenants/a');
    backoff.failed('tenants/a');
    backoff.requeued('tenants/a', { requeueAfterMs: 100 }, false);
    expect(backoff.failed('tenants/a')).toEqual({ attempt: 1, delayMs: 500 });
    expect(backoff.requeued('tenants/a', { requeueAfterMs: 100 }, false)).toBe(200);
    backoff.reset('tenants/a');
    expect(backoff.requeued('tenants/a', { requeueAfterMs: 100 }, false)).toBe(100);
  });
});
