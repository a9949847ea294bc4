import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { elapsed, reportProgress } from './progress.ts';

describe('reportProgress (a cold first run says how it goes)', () => {
  it('says at once what starts and how long it typically takes, then the time elapsed with each report until stopped', async () => {
    const lines: string[] = [];
    let compiled = 0;
    const progress = reportProgress({ label: 'building the temporal CLI', typical: '5-10 minutes on 2 cores', log: (line) => lines.push(line), detail: () => `${++compiled} packages compiled`, intervalMs: 20 });
    await sleep(90);
    progress.stop();
    const reported = lines.length;
    await sleep(60);
    expect(lines.length).toBe(reported);
    expect(lines[0]).toBe('building the temporal CLI: first run only (typically 5-10 minutes on 2 cores)');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines[1]).toBe('still building the temporal CLI: 0s elapsed of typically 5-10 minutes on 2 cores; 1 packages compiled');
  });

  it('writes durations as seconds, then minutes and seconds', () => {
    expect(elapsed(Date.now() - 42_000)).toBe('42s');
    expect(elapsed(Date.now() - 425_000)).toBe('7m05s');
  });
});
