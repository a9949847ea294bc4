import { execa } from 'execa';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The environment npm runs with in these tests: its cache, global config and user config inside
 * `dir`, no update notice, audit or funding calls, and `registry` (an address nothing answers at
 * unless a test starts a registry there, so that a step needing the network fails instead of
 * reaching out).
 */
export function npmEnv(dir: string, registry = 'http://127.0.0.1:9/'): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    TMPDIR: process.env['TMPDIR'] ?? '/tmp',
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_userconfig: join(dir, 'npmrc'),
    npm_config_globalconfig: join(dir, 'npmrc-global'),
    npm_config_registry: registry,
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_loglevel: 'warn',
  };
}

export async function npm(args: string[], env: Record<string, string>, cwd = REPO) {
  const result = await execa('npm', args, { env, extendEnv: false, cwd, reject: false, timeout: 180_000 });
  if (result.exitCode !== 0) throw new Error(`npm ${args.join(' ')} exited with ${result.exitCode}:\n${result.stderr}\n${result.stdout}`);
  return result;
}

export interface PackedClient {
  tarball: string;
  name: string;
  version: string;
  files: string[];
}

/** `npm pack ./cli` (its prepack builds the client) into `dest`. */
export async function packClient(dest: string, env: Record<string, string>): Promise<PackedClient> {
  await mkdir(dest, { recursive: true });
  const { stdout } = await npm(['pack', './cli', '--json', '--pack-destination', dest], env);
  // The prepack step's own output comes first on stdout; the JSON report is the last thing npm prints.
  const report = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as Array<{ filename: string; name: string; version: string; files: Array<{ path: string }> }>;
  const packed = report[0]!;
  return { tarball: join(dest, packed.filename), name: packed.name, version: packed.version, files: packed.files.map((f) => f.path) };
}

/** The `svc` executable `npm install -g` put under `prefix`. */
export const installedBin = (prefix: string) => join(prefix, 'bin', 'svc');

/** Runs an installed `svc` with only the environment given (plus PATH, TMPDIR). */
export async function runInstalled(bin: string, args: string[], env: Record<string, string | undefined>, cwd?: string) {
  const result = await execa(bin, args, {
    env: { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], ...env },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 90_000,
    ...(cwd ? { cwd } : {}),
  });
  let json: any;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    json = undefined;
  }
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr, json };
}
