import { execFile, spawn } from 'node:child_process';
import {
  closeSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SearchAttributeType as SdkSearchAttributeType } from '@temporalio/common';
import { PLATFORM_SEARCH_ATTRIBUTE_KEYS } from '../../control-plane/temporal/workflow-contract.ts';
import { elapsed, findOnPath, isExecutable, runGo } from './go-build.ts';
import { isAlive, portIsFree, readText, signal, tail, waitForExit, withLock } from './process.ts';
import { cacheDir, stateDir } from '../../control-plane/app/state-dir.ts';

/**
 * The Temporal CLI version built when none is supplied: the newest tag whose go.mod has no
 * `replace` directive, which `go install pkg@version` requires.
 */
export const TEMPORAL_CLI_VERSION = '1.5.1';
/** How long building it from its Go module typically takes on a cold Go cache. */
const TEMPORAL_CLI_BUILD_TIME = '5-10 minutes on 2 cores';

/** Value types a custom search attribute can have, as the CLI spells them. */
export type SearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Datetime' | 'Bool' | 'Double' | 'KeywordList';

type Log = (msg: string) => void;

export interface TemporalCliOptions {
  log?: Log;
}

export interface TemporalDevServerOptions {
  /** State name; the SQLite file, log and pid file live in `stateDir(name)`. */
  name: string;
  /** Frontend gRPC port on 127.0.0.1. */
  port: number;
  /** Web UI port on 127.0.0.1; without it the server runs headless. */
  uiPort?: number;
  /** Namespace created at start besides `default` (which always exists). Default `default`. */
  namespace?: string;
  /** The `temporal` binary; resolved with {@link ensureTemporalCli} when omitted. */
  cli?: string;
  log?: Log;
}

export interface TemporalDevServer {
  /** gRPC address for clients, e.g. `127.0.0.1:27233`. */
  address: string;
  namespace: string;
  /** Web UI, when started with `uiPort`. */
  uiUrl?: string;
  dbFile: string;
  /** The server process. */
  pid: number;
  /** The `temporal` binary that runs it; also usable as a client. */
  cli: string;
  /** SIGTERM, then SIGKILL after 20 s; resolves once the process has exited. A no-op when it is not running. */
  stop(): Promise<void>;
}

export interface SearchAttributesOptions {
  cli: string;
  address: string;
  namespace?: string;
  attributes: Record<string, SearchAttributeType>;
}

interface ServerState {
  pid: number;
  port: number;
  uiPort: number | null;
  namespace: string;
  dbFile: string;
  /** SQLite pragmas the server was started with (absent: started before they were set). */
  sqlitePragmas?: string[];
  /** The CLI that started it (absent: started before this was recorded); another version restarts it. */
  cli?: string;
}

/**
 * A write-ahead log instead of the default rollback journal, synced at checkpoints: far fewer
 * file operations per Temporal transaction, and the database still survives a crash of the server.
 */
const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

const CLI_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';
/** Set at link time as the CLI's release builds do; a plain `go install` reports `0.0.0-DEV`. */
const CLI_VERSION_VAR = 'github.com/temporalio/cli/temporalcli.Version';
const MIN_PATH_VERSION: Version = [1, 5, 0];
const BUILD_LOCK_TIMEOUT_MS = 45 * 60_000;
const SERVER_LOCK_TIMEOUT_MS = 5 * 60_000;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 20_000;
const STATE_FILE = 'temporal.pid.json';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

type Version = [number, number, number];

/**
 * Returns the path of a usable `temporal` CLI, in this order: `TEMPORAL_CLI` (a path, used as given);
 * the binary previously built into `cacheDir('temporal-cli-v1.5.1')`; a `temporal` on PATH reporting
 * version 1.5.0 or newer; otherwise builds v1.5.1 once with `go install` into that cache directory
 * (several minutes; progress goes to `log`). Builds are serialized across processes by a lock file,
 * and a process that waited for another's build reuses its result.
 */
export async function ensureTemporalCli(opts: TemporalCliOptions = {}): Promise<string> {
  const { log } = opts;
  const override = process.env.TEMPORAL_CLI;
  if (override) {
    const version = await cliVersion(override);
    if (!version) throw new Error(`TEMPORAL_CLI=${override} is not a runnable temporal CLI (\`${override} --version\` failed)`);
    return override;
  }

  const dir = cacheDir(`temporal-cli-v${TEMPORAL_CLI_VERSION}`);
  const cached = join(dir, 'temporal');
  if (sameVersion(await cliVersion(cached), TEMPORAL_CLI_VERSION)) return cached;

  const onPath = findOnPath('temporal');
  if (onPath) {
    const version = await cliVersion(onPath);
    if (version && compareVersions(version, MIN_PATH_VERSION) >= 0) {
      log?.(`using temporal CLI ${version.join('.')} from PATH (${onPath})`);
      return onPath;
    }
  }

  await withLock(join(dir, '.build.lock'), async () => {
    if (sameVersion(await cliVersion(cached), TEMPORAL_CLI_VERSION)) return;
    await buildCli(dir, cached, log);
  }, { timeoutMs: BUILD_LOCK_TIMEOUT_MS, log });
  return cached;
}

/**
 * Ensures a Temporal dev server for `name` (SQLite file `stateDir(name)/temporal.db`) serves on
 * 127.0.0.1:`port`, and returns how to reach it. The server runs detached and outlives the caller,
 * so later runs reuse it. Idempotent: a healthy server of that name with the same port, UI port and
 * namespace is reused; one with other settings, or one that does not answer, is stopped and
 * restarted on the same database file. Throws when the port (or UI port) is held by anything else,
 * or when the server is not ready within 60 s. Serialized per name across processes by a lock file.
 */
export async function ensureTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const { name, port, uiPort, namespace = 'default', log } = opts;
  if (!NAMESPACE.test(namespace)) throw new Error(`Invalid Temporal namespace ${JSON.stringify(namespace)}`);
  const base = stateDir(name);
  const dbFile = join(base, 'temporal.db');
  const address = `127.0.0.1:${port}`;
  const cli = opts.cli ?? (await ensureTemporalCli({ log }));
  const wanted: Omit<ServerState, 'pid'> = { port, uiPort: uiPort ?? null, namespace, dbFile, sqlitePragmas: SQLITE_PRAGMAS, cli };
  let pid = 0;

  await withLock(join(base, '.lock'), async () => {
    const running = readState(base);
    if (running) {
      const same =
        running.port === port &&
        running.uiPort === wanted.uiPort &&
        running.namespace === namespace &&
        running.sqlitePragmas?.join() === SQLITE_PRAGMAS.join() &&
        running.cli === cli;
      if (same && (await isServing(cli, address, namespace))) {
        log?.(`reusing Temporal dev server "${name}" on ${address} (pid ${running.pid})`);
        pid = running.pid;
        return;
      }
      log?.(
        same
          ? `Temporal dev server "${name}" (pid ${running.pid}) does not answer on ${address}; restarting it`
          : `stopping Temporal dev server "${name}" (port ${running.port}) to restart it with new settings`,
      );
      await stopServer(base);
    }

    for (const [what, p] of [['gRPC', port], ['UI', uiPort]] as const) {
      if (p !== undefined && !(await portIsFree(p))) {
        throw new Error(
          `Port ${p} on 127.0.0.1 is in use by another process, so the Temporal dev server "${name}" ` +
            `(${dbFile}) cannot take it for ${what}. Stop that process, choose another port, ` +
            `or set TEMPORAL_ADDRESS to use a running Temporal server.`,
        );
      }
    }

    const args = [
      'server',
      'start-dev',
      '--db-filename',
      dbFile,
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      ...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]),
      ...(namespace === 'default' ? [] : ['--namespace', namespace]),
      ...SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma]),
      '--log-level',
      'warn',
    ];
    const logFile = join(base, 'temporal.log');
    log?.(`starting Temporal dev server "${name}" on ${address}${uiPort === undefined ? '' : ` (UI on port ${uiPort})`}`);
    const out = openSync(logFile, 'w');
    let exited: string | undefined;
    try {
      const child = spawn(cli, args, { cwd: base, env: cliEnv(), detached: true, stdio: ['ignore', out, out] });
      child.once('exit', (code, signal) => (exited = signal ?? `code ${code}`));
      child.once('error', (error) => (exited = error.message));
      child.unref();
      if (!child.pid) throw new Error(`could not run ${cli}`);
      pid = child.pid;
    } finally {
      closeSync(out);
    }
    writeFileSync(join(base, STATE_FILE), `${JSON.stringify({ pid, ...wanted })}\n`);

    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await isServing(cli, address, namespace))) {
      if (exited !== undefined || !isAlive(pid)) {
        rmSync(join(base, STATE_FILE), { force: true });
        throw new Error(`Temporal dev server "${name}" exited (${exited ?? 'gone'}) before it was ready; log ${logFile}:\n${tail(readText(logFile))}`);
      }
      if (Date.now() > deadline) {
        await stopServer(base);
        throw new Error(`Temporal dev server "${name}" was not ready on ${address} within 60 s; log ${logFile}:\n${tail(readText(logFile))}`);
      }
      await sleep(250);
    }
    log?.(`Temporal dev server "${name}" is ready on ${address} (pid ${pid})`);
  }, { timeoutMs: SERVER_LOCK_TIMEOUT_MS, log });

  return {
    address,
    namespace,
    uiUrl: uiPort === undefined ? undefined : `http://127.0.0.1:${uiPort}`,
    dbFile,
    pid,
    cli,
    stop: () => stopServer(base),
  };
}

/**
 * Registers each custom search attribute that `namespace` (default `default`) lacks, through the
 * operator service (`temporal operator search-attribute create`). Idempotent: attributes already
 * present with the same type are left alone; one present with another type is an error. Works on
 * any server, unlike start-dev's `--search-attribute`, which applies only when the namespace is
 * first created in a new database file.
 */
export async function ensureSearchAttributes(opts: SearchAttributesOptions): Promise<void> {
  const { cli, address, namespace = 'default', attributes } = opts;
  const entries = Object.entries(attributes);
  for (const [name] of entries) {
    if (!IDENTIFIER.test(name)) throw new Error(`Invalid search attribute name ${JSON.stringify(name)}`);
  }

  const present = await listCustomSearchAttributes(cli, address, namespace);
  const missing = entries.filter(([name, type]) => {
    const existing = present[name];
    if (existing === undefined) return true;
    if (normalizeType(existing) !== normalizeType(type)) {
      throw new Error(`Search attribute ${name} already exists in namespace "${namespace}" on ${address} as ${existing}, not ${type}`);
    }
    return false;
  });
  if (missing.length === 0) return;

  await runTemporalCli(cli, [
    'operator',
    'search-attribute',
    'create',
    ...missing.flatMap(([name, type]) => ['--name', name, '--type', type]),
    ...clientFlags(address, namespace),
  ]);
  const after = await listCustomSearchAttributes(cli, address, namespace);
  const absent = missing.filter(([name]) => after[name] === undefined).map(([name]) => name);
  if (absent.length > 0) throw new Error(`Search attributes ${absent.join(', ')} were created but are not listed on ${address}`);
}

/**
 * Runs the `temporal` CLI and returns its stdout. Ambient `TEMPORAL_*` variables are removed so that
 * only the given flags decide which server is addressed.
 */
export function runTemporalCli(cli: string, args: string[], opts: { timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cli,
      args,
      { env: cliEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 60_000 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`temporal ${args.join(' ')} failed: ${tail(stderr || stdout || error.message)}`, { cause: error }));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

/** Flags that point a CLI client command at `address`/`namespace` and ignore local client config. */
export function clientFlags(address: string, namespace = 'default', commandTimeout = '20s'): string[] {
  return ['--address', address, '--namespace', namespace, '--disable-config-file', '--disable-config-env', '--command-timeout', commandTimeout];
}

async function listCustomSearchAttributes(cli: string, address: string, namespace: string): Promise<Record<string, string>> {
  const stdout = await runTemporalCli(cli, ['operator', 'search-attribute', 'list', '--output', 'json', ...clientFlags(address, namespace)]);
  const parsed = JSON.parse(stdout) as { customAttributes?: Record<string, string> };
  return parsed.customAttributes ?? {};
}

/** `INDEXED_VALUE_TYPE_KEYWORD_LIST`, `KeywordList` and `keywordlist` are the same type. */
function normalizeType(type: string): string {
  return type.replace(/^INDEXED_VALUE_TYPE_/, '').replaceAll('_', '').toLowerCase();
}

async function buildCli(dir: string, target: string, log?: Log): Promise<void> {
  const gobin = join(dir, `.gobin-${process.pid}`);
  rmSync(gobin, { recursive: true, force: true });
  const started = Date.now();
  log?.(`building temporal CLI v${TEMPORAL_CLI_VERSION} with go install into ${dir}`);
  try {
    await runGo({
      args: ['install', '-v', `-ldflags=-s -w -X ${CLI_VERSION_VAR}=${TEMPORAL_CLI_VERSION}`, `${CLI_PACKAGE}@v${TEMPORAL_CLI_VERSION}`],
      cwd: dir,
      env: { GOBIN: gobin },
      label: 'the temporal CLI',
      log,
      typical: TEMPORAL_CLI_BUILD_TIME,
      missingGoHint: 'set TEMPORAL_CLI to a temporal binary, or set TEMPORAL_ADDRESS to a running Temporal server.',
    });
    renameSync(join(gobin, 'temporal'), target);
  } finally {
    rmSync(gobin, { recursive: true, force: true });
  }
  const version = await cliVersion(target);
  if (!sameVersion(version, TEMPORAL_CLI_VERSION)) {
    rmSync(target, { force: true });
    throw new Error(`The built temporal CLI reports version ${version?.join('.') ?? 'nothing'}, expected ${TEMPORAL_CLI_VERSION}`);
  }
  log?.(`built temporal CLI v${TEMPORAL_CLI_VERSION} in ${elapsed(started)}: ${target}`);
}

/** The version `cli --version` reports, or undefined when it does not run. */
function cliVersion(cli: string): Promise<Version | undefined> {
  if (!isExecutable(cli)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile(cli, ['--version'], { env: cliEnv(), encoding: 'utf8', timeout: 30_000 }, (error, stdout) => {
      const match = /version (\d+)\.(\d+)\.(\d+)/.exec(stdout);
      resolve(error || !match ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])]);
    });
  });
}

function sameVersion(version: Version | undefined, expected: string): boolean {
  return version?.join('.') === expected;
}

function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether the frontend reports SERVING and `namespace` is registered. */
async function isServing(cli: string, address: string, namespace: string): Promise<boolean> {
  try {
    const flags = clientFlags(address, namespace, '5s');
    const health = await runTemporalCli(cli, ['operator', 'cluster', 'health', ...flags], { timeoutMs: 10_000 });
    if (!/\bSERVING\b/.test(health)) return false;
    await runTemporalCli(cli, ['operator', 'namespace', 'describe', ...flags], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** The recorded server of `base`, if its process is alive and is a dev server on that state's database. */
function readState(base: string): ServerState | undefined {
  let state: ServerState;
  try {
    state = JSON.parse(readText(join(base, STATE_FILE))) as ServerState;
  } catch {
    return undefined;
  }
  if (!(state.pid > 0 && isAlive(state.pid))) return undefined;
  const cmdline = readText(`/proc/${state.pid}/cmdline`).split('\0');
  return cmdline.includes('start-dev') && cmdline.includes(state.dbFile) ? state : undefined;
}

async function stopServer(base: string): Promise<void> {
  const running = readState(base);
  if (running) {
    signal(running.pid, 'SIGTERM');
    if (!(await waitForExit(running.pid, STOP_GRACE_MS))) {
      signal(running.pid, 'SIGKILL');
      if (!(await waitForExit(running.pid, 10_000))) {
        throw new Error(`Temporal dev server (pid ${running.pid}, ${running.dbFile}) did not exit after SIGKILL`);
      }
    }
  }
  rmSync(join(base, STATE_FILE), { force: true });
}

/** The environment for CLI processes: this one's, without `TEMPORAL_*` client settings. */
function cliEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')));
}

/** The CLI's name for each kind of search attribute the SDK defines. */
const CLI_TYPES: Record<SdkSearchAttributeType, SearchAttributeType> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** Custom search attributes every platform workflow sets (the workflow contract's), so the Temporal UI can filter by them. */
export const PLATFORM_SEARCH_ATTRIBUTES: Readonly<Record<string, SearchAttributeType>> = Object.fromEntries(
  PLATFORM_SEARCH_ATTRIBUTE_KEYS.map((key) => [key.name, CLI_TYPES[key.type]]),
);

/**
 * The platform's Temporal: `TEMPORAL_ADDRESS` when set (its operator registers the search
 * attributes), else a local dev server with its SQLite history and the platform's search attributes.
 */
export async function ensurePlatformTemporal(opts: {
  name: string;
  port: number;
  uiPort?: number;
  log?: (message: string) => void;
}): Promise<{ address: string; namespace: string; uiUrl?: string }> {
  if (process.env.TEMPORAL_ADDRESS) {
    return { address: process.env.TEMPORAL_ADDRESS, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' };
  }
  const server = await ensureTemporalDevServer({ name: opts.name, port: opts.port, uiPort: opts.uiPort, log: opts.log });
  await ensureSearchAttributes({ cli: server.cli, address: server.address, namespace: server.namespace, attributes: PLATFORM_SEARCH_ATTRIBUTES });
  return { address: server.address, namespace: server.namespace, uiUrl: server.uiUrl };
}

/** Stops the Temporal dev server of state `name` if it runs; a no-op otherwise. */
export async function stopTemporalDevServer(name: string): Promise<void> {
  await stopServer(stateDir(name));
}
