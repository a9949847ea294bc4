import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

const ROOT_STATE_BASE = '/var/tmp/svc-platform';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** True when this process runs as root (uid 0). */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * The directory holding local state for `name` (a database cluster, a dev server's files), created
 * if missing. `SVC_STATE_DIR/<name>` when set; as root `/var/tmp/svc-platform/<name>`, whose parents
 * other system users (postgres) can traverse; otherwise `${XDG_STATE_HOME:-~/.local/state}/svc-platform/<name>`.
 * Never inside the repository.
 */
export function stateDir(name: string): string {
  return ensureDir(join(stateBase(), checkName(name)));
}

/**
 * The directory for rebuildable artifacts (built binaries) of `name`, created if missing.
 * `SVC_CACHE_DIR/<name>` when set; otherwise `${XDG_CACHE_HOME:-~/.cache}/svc-platform/<name>`, except
 * that as root with `readableBySystemUsers` it is `<state base>/cache/<name>` so that system users
 * such as postgres can read it.
 */
export function cacheDir(name: string, opts: { readableBySystemUsers?: boolean } = {}): string {
  checkName(name);
  const override = process.env.SVC_CACHE_DIR;
  if (override) return ensureDir(join(resolve(override), name));
  if (opts.readableBySystemUsers && isRoot()) return ensureDir(join(stateBase(), 'cache', name));
  return ensureDir(join(xdgDir('XDG_CACHE_HOME', '.cache'), 'svc-platform', name));
}

function stateBase(): string {
  const override = process.env.SVC_STATE_DIR;
  if (override) return resolve(override);
  if (isRoot()) {
    ensureDir(ROOT_STATE_BASE);
    chmodSync(ROOT_STATE_BASE, 0o755);
    return ROOT_STATE_BASE;
  }
  return join(xdgDir('XDG_STATE_HOME', join('.local', 'state')), 'svc-platform');
}

function xdgDir(variable: string, fallback: string): string {
  const value = process.env[variable];
  return value && isAbsolute(value) ? value : join(homedir(), fallback);
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  return dir;
}

function checkName(name: string): string {
  if (!NAME.test(name)) throw new Error(`Invalid state name ${JSON.stringify(name)}: use letters, digits, '.', '_' or '-'`);
  return name;
}
