import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  appendFileSync,
  chmodSync,
  chownSync,
  constants,
  existsSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { createVectorExtension, ensurePgvectorInstalled } from './pgvector.ts';
import { isAlive, portIsFree, readText, tail, withLock } from './process.ts';
import { isRoot, stateDir } from '../../control-plane/app/state-dir.ts';

export interface LocalPostgresOptions {
  /** State name; the cluster lives in `stateDir(name)/data`. */
  name: string;
  /** TCP port on 127.0.0.1. */
  port: number;
  /** `false` turns off fsync, synchronous_commit and full_page_writes (throwaway test clusters). Default `true`. */
  durable?: boolean;
  log?: (msg: string) => void;
}

export interface LocalPostgres {
  /** Superuser URL of the `postgres` database, e.g. `postgres://postgres@127.0.0.1:24339/postgres`. */
  url: string;
  dataDir: string;
  /** Fast shutdown; resolves once the server has exited. A no-op when it is not running. */
  stop(): Promise<void>;
}

interface PgBin {
  major: number;
  dir: string;
}

const MIN_MAJOR = 15;
const SYSTEM_USER = 'postgres';
const SETTINGS_FILE = 'svc-platform.conf';
const INCLUDE_LINE = `include_if_exists = '${SETTINGS_FILE}'`;
const DEBIAN_PG_ROOT = '/usr/lib/postgresql';
const DB_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Ensures a private PostgreSQL cluster for `name` runs on 127.0.0.1:`port` with trust auth and
 * superuser `postgres`, and returns its admin URL. Idempotent: a running cluster of that name on
 * that port is reused (settings reloaded), one on another port is restarted. Uses the highest
 * installed PostgreSQL >= 15 (installing Debian's `postgresql` with apt-get when none is present);
 * as root, the binaries run as the `postgres` system user. Throws when the port is held by
 * anything else. Serialized per name across processes by a lock file.
 */
export async function ensureLocalPostgres(opts: LocalPostgresOptions): Promise<LocalPostgres> {
  const { name, port, durable = true, log } = opts;
  const base = stateDir(name);
  const dataDir = join(base, 'data');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  await withLock(join(base, '.lock'), async () => {
    const running = readPostmasterPid(dataDir);
    if (running) {
      if (running.port === port && sameDir(await queryDataDirectory(port), dataDir)) {
        if (writeSettings(dataDir, port, durable)) process.kill(running.pid, 'SIGHUP');
        log?.(`reusing PostgreSQL "${name}" on 127.0.0.1:${port}`);
        return;
      }
      log?.(
        running.port === port
          ? `PostgreSQL "${name}" (pid ${running.pid}) does not answer on port ${port}; restarting it`
          : `stopping PostgreSQL "${name}" (port ${running.port}) to restart it on port ${port}`,
      );
      await stopCluster(dataDir);
    }

    if (!(await portIsFree(port))) {
      throw new Error(
        `Port ${port} on 127.0.0.1 is in use by another process, so the private PostgreSQL "${name}" ` +
          `(${dataDir}) cannot start there. Stop that process or choose another port.`,
      );
    }

    const bin = await resolveBinaries(dataDir, log);
    if (isRoot()) handOverToSystemUser(base);

    if (!isInitialized(dataDir)) {
      rmSync(dataDir, { recursive: true, force: true });
      log?.(`initializing PostgreSQL ${bin.major} cluster "${name}" in ${dataDir}`);
      await run(
        join(bin.dir, 'initdb'),
        ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
        base,
      );
      appendFileSync(join(dataDir, 'postgresql.conf'), `\n${INCLUDE_LINE}\n`);
    }
    writeSettings(dataDir, port, durable);
    removeStaleLock(join(dataDir, 'postmaster.pid'));
    removeStaleLock(join(socketDirFor(dataDir, port), `.s.PGSQL.${port}.lock`));

    const logFile = join(base, 'postgres.log');
    rmSync(logFile, { force: true });
    log?.(`starting PostgreSQL ${bin.major} "${name}" on 127.0.0.1:${port}`);
    try {
      await run(join(bin.dir, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '120', 'start'], base);
    } catch (error) {
      throw new Error(`PostgreSQL "${name}" did not start; server log:\n${tail(readText(logFile))}`, { cause: error });
    }
    if (!sameDir(await queryDataDirectory(port), dataDir)) {
      throw new Error(`PostgreSQL "${name}" started but 127.0.0.1:${port} is answered by another server`);
    }
  });

  await ensureVectorExtension(dataDir, url, log);
  return { url, dataDir, stop: () => stopCluster(dataDir) };
}

/**
 * pgvector in the cluster: built from Debian's source package when missing (scripts/stack/pgvector.ts)
 * and created by the superuser in `template1`, so every database made afterwards has it. Without
 * it the platform still runs, with full-text search only.
 */
async function ensureVectorExtension(dataDir: string, url: string, log?: (msg: string) => void): Promise<void> {
  const major = Number.parseInt(readText(join(dataDir, 'PG_VERSION')), 10);
  const bin = installedBinaries().find((b) => b.major === major);
  if (!bin || !(await ensurePgvectorInstalled({ major, binDir: bin.dir, log }))) return;
  await createVectorExtension(url, [], log);
}

/** Creates database `dbName` (dropping any existing one first) and returns its URL, built from `adminUrl`. */
export async function createDatabase(adminUrl: string, dbName: string): Promise<string> {
  checkDbName(dbName);
  await withAdmin(adminUrl, async (sql) => {
    await sql`drop database if exists ${sql(dbName)} with (force)`;
    await sql`create database ${sql(dbName)}`;
  });
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}

/** Drops database `dbName` if it exists, disconnecting its sessions. */
export async function dropDatabase(adminUrl: string, dbName: string): Promise<void> {
  checkDbName(dbName);
  await withAdmin(adminUrl, async (sql) => {
    await sql`drop database if exists ${sql(dbName)} with (force)`;
  });
}

async function withAdmin(adminUrl: string, fn: (sql: postgres.Sql) => Promise<void>): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 10, onnotice: () => {} });
  try {
    await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function checkDbName(dbName: string): void {
  if (!DB_NAME.test(dbName)) throw new Error(`Invalid database name ${JSON.stringify(dbName)}: use [a-z0-9_], at most 63 characters`);
}

function isInitialized(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION')) && readText(join(dataDir, 'postgresql.conf')).includes(INCLUDE_LINE);
}

/** Writes the cluster's own settings file; returns whether its content changed. */
function writeSettings(dataDir: string, port: number, durable: boolean): boolean {
  const socketDir = socketDirFor(dataDir, port);
  const flag = durable ? 'on' : 'off';
  const content = [
    '# Rewritten by scripts/stack/postgres.ts on every start; local edits are lost.',
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    `unix_socket_directories = '${socketDir.replaceAll("'", "''")}'`,
    'max_connections = 200',
    'shared_buffers = 256MB',
    'log_checkpoints = off',
    `fsync = ${flag}`,
    `synchronous_commit = ${flag}`,
    `full_page_writes = ${flag}`,
    '',
  ].join('\n');
  const file = join(dataDir, SETTINGS_FILE);
  if (readText(file) === content) return false;
  writeFileSync(file, content, { mode: 0o600 });
  if (isRoot()) {
    const { uid, gid } = systemUserIds();
    chownSync(file, uid, gid);
  }
  return true;
}

function socketDirFor(dataDir: string, port: number): string {
  return `${dataDir}/.s.PGSQL.${port}`.length <= 100 ? dataDir : '/tmp';
}

/**
 * Removes a PostgreSQL lock file whose pid is no running PostgreSQL. PostgreSQL removes one whose
 * owner has exited itself, but not when that pid is an unreaped zombie (containers whose init does
 * not reap) or another live process has taken it since: it takes either for a running server.
 */
function removeStaleLock(file: string): void {
  const pid = Number(readText(file).split('\n')[0]);
  if (pid > 0 && !(isAlive(pid) && runsPostgres(pid))) rmSync(file, { force: true });
}

function handOverToSystemUser(base: string): void {
  const { uid, gid } = systemUserIds();
  chownSync(base, uid, gid);
  chmodSync(base, 0o700);
  try {
    execFileSync('runuser', ['-u', SYSTEM_USER, '--', 'test', '-w', base, '-a', '-x', base], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `The ${SYSTEM_USER} system user cannot reach ${base}. Every parent directory must be searchable by ` +
        `other users: unset SVC_STATE_DIR or point it to such a place (e.g. under /var/tmp).`,
    );
  }
}

function systemUserIds(): { uid: number; gid: number } {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, SYSTEM_USER], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(`PostgreSQL refuses to run as root and there is no "${SYSTEM_USER}" system user; install Debian's postgresql package`);
  }
}

async function resolveBinaries(dataDir: string, log?: (msg: string) => void): Promise<PgBin> {
  let bins = installedBinaries();
  if (bins.length === 0) {
    await installPostgres(log);
    bins = installedBinaries();
    if (bins.length === 0) throw new Error(`apt-get installed postgresql, but no PostgreSQL >= ${MIN_MAJOR} was found in ${DEBIAN_PG_ROOT}`);
  }
  const existing = Number.parseInt(readText(join(dataDir, 'PG_VERSION')), 10);
  if (Number.isNaN(existing)) return bins[0]!;
  const match = bins.find((b) => b.major === existing);
  if (!match) {
    throw new Error(
      `${dataDir} was created by PostgreSQL ${existing}, which is not installed (found ${bins.map((b) => b.major).join(', ')}); ` +
        `remove ${dataDir} to recreate the cluster`,
    );
  }
  return match;
}

/** PostgreSQL >= 15 binary directories, highest major first: Debian's layout, else `pg_ctl` on PATH. */
function installedBinaries(): PgBin[] {
  const found: PgBin[] = [];
  if (existsSync(DEBIAN_PG_ROOT)) {
    for (const entry of readdirSync(DEBIAN_PG_ROOT)) {
      const dir = join(DEBIAN_PG_ROOT, entry, 'bin');
      if (/^\d+$/.test(entry) && hasServerBinaries(dir)) found.push({ major: Number(entry), dir });
    }
  }
  if (found.length === 0) {
    const dir = (process.env.PATH ?? '').split(delimiter).find((d) => d && hasServerBinaries(d));
    if (dir) {
      try {
        const version = execFileSync(join(dir, 'pg_ctl'), ['--version'], { encoding: 'utf8' });
        const major = Number(/\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1]);
        if (major) found.push({ major, dir });
      } catch {
        // an unusable pg_ctl on PATH counts as none
      }
    }
  }
  return found.filter((b) => b.major >= MIN_MAJOR).sort((a, b) => b.major - a.major);
}

function hasServerBinaries(dir: string): boolean {
  return ['initdb', 'pg_ctl', 'postgres'].every((file) => {
    try {
      accessSync(join(dir, file), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function installPostgres(log?: (msg: string) => void): Promise<void> {
  const prefix = isRoot() ? [] : ['sudo', '-n'];
  if (!isRoot() && !onPath('sudo')) {
    throw new Error(`PostgreSQL >= ${MIN_MAJOR} is not installed: run "apt-get install -y postgresql" as root, or set DATABASE_URL`);
  }
  log?.('PostgreSQL not found; installing it with apt-get (this takes a while)');
  const aptGet = [...prefix, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', '-o', 'DPkg::Lock::Timeout=300'];
  const [cmd, ...args] = aptGet;
  await exec(cmd!, [...args, 'update'], '/');
  await exec(cmd!, [...args, 'install', '-y', 'postgresql'], '/');
}

function onPath(file: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, file)));
}

/** Runs a PostgreSQL binary, as the postgres system user when root. */
function run(file: string, args: string[], cwd: string): Promise<string> {
  return isRoot() ? exec('runuser', ['-u', SYSTEM_USER, '--', file, ...args], cwd) : exec(file, args, cwd);
}

function exec(file: string, args: string[], cwd: string): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PG')));
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${[file, ...args].join(' ')} failed: ${tail(stderr || stdout || error.message)}`, { cause: error }));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** The live postmaster of `dataDir`, if any. */
function readPostmasterPid(dataDir: string): { pid: number; port: number } | undefined {
  const lines = readText(join(dataDir, 'postmaster.pid')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && isAlive(pid) && runsPostgres(pid) ? { pid, port } : undefined;
}

/**
 * Whether process `pid` is a PostgreSQL server: after a crash, `postmaster.pid` may name a pid
 * that another process has taken since, which must never be signalled. Read from /proc where
 * there is one; elsewhere a live pid is taken at its word.
 */
function runsPostgres(pid: number): boolean {
  if (!existsSync('/proc/self')) return true;
  return basename(readText(`/proc/${pid}/cmdline`).split('\0')[0] ?? '') === 'postgres';
}

async function stopCluster(dataDir: string): Promise<void> {
  const running = readPostmasterPid(dataDir);
  if (!running) return;
  process.kill(running.pid, 'SIGINT');
  const deadline = Date.now() + 60_000;
  while (existsSync(join(dataDir, 'postmaster.pid')) && isAlive(running.pid)) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL (pid ${running.pid}, ${dataDir}) did not stop within 60 s`);
    await sleep(50);
  }
}

async function queryDataDirectory(port: number): Promise<string | undefined> {
  const sql = postgres({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    max: 1,
    connect_timeout: 3,
    onnotice: () => {},
  });
  try {
    const rows = await Promise.race([
      sql<{ data_directory: string }[]>`show data_directory`,
      sleep(5_000, [] as { data_directory: string }[], { ref: false }),
    ]);
    return rows[0]?.data_directory;
  } catch {
    return undefined;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function sameDir(a: string | undefined, b: string): boolean {
  if (!a) return false;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}


/** Stops the private cluster of state `name` if it runs (a fast shutdown); a no-op otherwise. */
export async function stopLocalPostgres(name: string): Promise<void> {
  await stopCluster(join(stateDir(name), 'data'));
}
