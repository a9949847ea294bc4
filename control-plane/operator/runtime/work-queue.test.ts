import { describe, expect, it } from 'vitest';
import { createWorkQueue } from './work-queue.ts';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

describe('operator work queue', () => {
  it('runs urgent keys before background ones, at most `concurrency` at once', async () => {
    const order: string[] = [];
    let inFlight = 0;
    let most = 0;
    const queue = createWorkQueue({
      concurrency: 2,
      run: async (key) => {
        order.push(key);
        most = Math.max(most, ++inFlight);
        await tick(5);
        inFlight--;
      },
    });
    for (const key of ['b1', 'b2', 'b3']) queue.add(key, { background: true });
    queue.add('u1');
    queue.add('u2');
    queue.add('b2'); // made urgent
    queue.setOpen(true);
    await tick(100);
    queue.close();
    expect(order.slice(0, 3)).toEqual(['u1', 'u2', 'b2']);
    expect(order.sort()).toEqual(['b1', 'b2', 'b3', 'u1', 'u2']);
    expect(most).toBe(2);
  });

  it('never runs a key twice at once; added while it runs, it runs again afterwards', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const queue = createWorkQueue({
      concurrency: 4,
      run: async (key) => {
        runs.push(`start ${key}`);
        if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
        runs.push(`end ${key}`);
      },
    });
    queue.setOpen(true);
    queue.add('a');
    await tick();
    queue.add('a');
    await tick(250);
    expect(runs).toEqual(['start a']);
    release();
    await tick(250);
    queue.close();
    expect(runs).toEqual(['start a', 'end a', 'start a', 'end a']);
  });

  it('holds delayed keys until due and hands out nothing while closed', async () => {
    const runs: string[] = [];
    const queue = createWorkQueue({ concurrency: 1, run: async (key) => void runs.push(key) });
    queue.add('later', { delayMs: 150 });
    queue.add('now');
    await tick(50);
    expect(runs).toEqual([]);
    queue.setOpen(true);
    await tick(20);
    expect(runs).toEqual(['now']);
    await tick(300);
    queue.close();
    expect(runs).toEqual(['now', 'later']);
  });
});

describe('operator work queue requeues', () => {
  it('runs a key again after the delay its run asked for', async () => {
    const runs: number[] = [];
    const started = Date.now();
    const queue = createWorkQueue({
      concurrency: 1,
      run: () => {
        runs.push(Date.now() - started);
        return Promise.resolve(runs.length === 1 ? { delayMs: 150 } : undefined);
      },
    });
    queue.setOpen(true);
    queue.add('a');
    await tick(400);
    queue.close();
    expect(runs).toHaveLength(2);
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(150);
  });
});
