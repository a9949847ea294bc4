import { execFile } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { elapsed, isExecutable, runGo } from './go-build.ts';
import { withLock } from './process.ts';
import { cacheDir } from '../../control-plane/app/state-dir.ts';

/** The toxiproxy release built from its Go module (github.com/Shopify/toxiproxy/v2; its go.mod has no `replace`). */
export const TOXIPROXY_VERSION = '2.12.0';

const SERVER_PACKAGE = 'github.com/Shopify/toxiproxy/v2/cmd/server';
/** Set at link time as toxiproxy's release builds do; a plain `go install` reports `git`. */
const VERSION_VAR = 'github.com/Shopify/toxiproxy/v2.Version';
const BUILD_LOCK_TIMEOUT_MS = 20 * 60_000;

/**
 * Returns the path of `toxiproxy-server`: `TOXIPROXY_SERVER` when set (used as given), else
 * v2.12.0 built once with `go install` into `cacheDir('toxiproxy-v2.12.0')` (about a minute on a
 * cold Go cache; serialized across processes by a lock file, whose waiter reuses the result).
 */
export async function ensureToxiproxy(opts: { log?: (message: string) => void } = {}): Promise<string> {
  const { log } = opts;
  const override = process.env.TOXIPROXY_SERVER;
  if (override) {
    if (!isExecutable(override)) throw new Error(`TOXIPROXY_SERVER=${override} is not an executable file`);
    return override;
  }
  const dir = cacheDir(`toxiproxy-v${TOXIPROXY_VERSION}`);
  const server = join(dir, 'toxiproxy-server');
  if ((await serverVersion(server)) === TOXIPROXY_VERSION) return server;

  await withLock(join(dir, '.build.lock'), async () => {
    if ((await serverVersion(server)) === TOXIPROXY_VERSION) return;
    const gobin = join(dir, `.gobin-${process.pid}`);
    rmSync(gobin, { recursive: true, force: true });
    const started = Date.now();
    log?.(`building toxiproxy v${TOXIPROXY_VERSION} with go install into ${dir}`);
    try {
      await runGo({
        args: ['install', '-v', `-ldflags=-s -w -X ${VERSION_VAR}=${TOXIPROXY_VERSION}`, `${SERVER_PACKAGE}@v${TOXIPROXY_VERSION}`],
        cwd: dir,
        env: { GOBIN: gobin },
        label: `toxiproxy v${TOXIPROXY_VERSION}`,
        log,
        typical: 'about a minute on 2 cores',
        missingGoHint: 'set TOXIPROXY_SERVER to a toxiproxy-server binary.',
      });
      const version = await serverVersion(join(gobin, 'server'));
      if (version !== TOXIPROXY_VERSION) throw new Error(`The built toxiproxy-server reports version ${JSON.stringify(version)}, expected ${TOXIPROXY_VERSION}`);
      renameSync(join(gobin, 'server'), server);
    } finally {
      rmSync(gobin, { recursive: true, force: true });
    }
    log?.(`built toxiproxy v${TOXIPROXY_VERSION} in ${elapsed(started)}: ${server}`);
  }, { timeoutMs: BUILD_LOCK_TIMEOUT_MS, log });
  return server;
}

/** The version `server -version` prints, or undefined when it does not run. */
function serverVersion(server: string): Promise<string | undefined> {
  if (!isExecutable(server)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile(server, ['-version'], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      const match = /(\d+\.\d+\.\d+)/.exec(stdout || stderr);
      resolve(error || !match ? undefined : match[1]);
    });
  });
}
