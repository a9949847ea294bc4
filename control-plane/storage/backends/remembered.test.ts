import { afterEach, describe, expect, it, vi } from 'vitest';
import { remembered } from './backend.ts';

describe('remembered platform facts', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shares one read among callers and keeps a healthy answer until it expires', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let reads = 0;
    const fact = remembered(async () => ++reads, () => true, 60_000);
    expect(await Promise.all([fact(), fact(), fact()])).toEqual([1, 1, 1]);
    vi.advanceTimersByTime(59_000);
    expect(await fact()).toBe(1);
    vi.advanceTimersByTime(2_000);
    expect(await fact()).toBe(2);
    expect(reads).toBe(2);
  });

  it('reads again after an unhealthy answer or a failure', async () => {
    const answers: Array<boolean | Error> = [false, new Error('connection refused'), true, false];
    let reads = 0;
    const fact = remembered(
      async () => {
        const answer = answers[reads++]!;
        if (answer instanceof Error) throw answer;
        return answer;
      },
      (healthy) => healthy,
    );
    expect(await fact()).toBe(false);
    await expect(fact()).rejects.toThrow('connection refused');
    expect(await fact()).toBe(true);
    expect(await fact()).toBe(true);
    expect(reads).toBe(3);
  });
});
