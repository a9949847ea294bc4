import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether nothing listens on 127.0.0.1:`port`. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Runs `fn` holding an exclusive lock file (created with O_EXCL, holding our pid). A lock whose
 * holder is gone is taken over; a live holder is waited for up to `timeoutMs`.
 */
export async function withLock(
  file: string,
  fn: () => Promise<void>,
  opts: { timeoutMs?: number; log?: (message: string) => void } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
  let announced = false;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readText(file));
      if (!(holder > 0 && isAlive(holder))) {
        rmSync(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${file} (held by pid ${holder})`);
      if (!announced) opts.log?.(`waiting for pid ${holder}, which holds ${file}`);
      announced = true;
      await sleep(250);
    }
  }
  try {
    await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

/** Whether `pid` is a live process; zombies (exited, not yet reaped) count as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = readText(`/proc/${pid}/stat`);
  return !/^\d+ \(.*\) Z/s.test(stat);
}

/** A file's text, or '' when it cannot be read. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Sends `name` to `pid`; a process already gone is fine. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Waits up to `timeoutMs` for `pid` to exit (zombies count as exited); false when it is still alive. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}
