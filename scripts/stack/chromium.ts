import { join } from 'node:path';
import { isExecutable } from './go-build.ts';
import { runCommand } from './kubernetes.ts';
import { withLock } from './process.ts';
import { isRoot, stateDir } from '../../control-plane/app/state-dir.ts';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Debian's `chromium`, installed with apt-get (as root) when missing, for tests that open the
 * edge's pages in a real headless browser. Concurrent callers wait for one installation.
 */
export async function ensureChromium(opts: { log?: (message: string) => void } = {}): Promise<string> {
  if (isExecutable(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (!isRoot()) throw new Error(`chromium is not installed at ${CHROMIUM_PATH}: run "apt-get install -y chromium" as root`);
  await withLock(
    join(stateDir('chromium'), 'install.lock'),
    async () => {
      if (isExecutable(CHROMIUM_PATH)) return;
      opts.log?.('chromium not found; installing it with apt-get (this takes a while)');
      const aptGet = ['-o', 'DPkg::Lock::Timeout=300'];
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      await runCommand('apt-get', [...aptGet, 'update'], { env, timeoutMs: 600_000 });
      await runCommand('apt-get', [...aptGet, 'install', '-y', '--no-install-recommends', 'chromium'], { env, timeoutMs: 900_000 });
    },
    { timeoutMs: 900_000, log: opts.log },
  );
  if (!isExecutable(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} is missing`);
  return CHROMIUM_PATH;
}
