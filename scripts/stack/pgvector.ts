import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { tail, withLock } from './process.ts';
import { reportProgress } from './progress.ts';
import { cacheDir, isRoot } from '../../control-plane/app/state-dir.ts';

/**
 * pgvector for the local PostgreSQL. Debian 12 ships no binary package of it, so it is built from
 * Debian's own source package (trixie's, through a `deb-src` entry of its own) against
 * `postgresql-server-dev-<major>` and installed with `make install`; the installed files are kept
 * under the cache directory, so a later setup (or a fresh server of the same major) copies them
 * instead of building again. The extension is not trusted: the cluster's superuser creates it, in
 * `template1` (so every database created afterwards has it) and in the databases given.
 */
export interface PgvectorOptions {
  /** PostgreSQL's major version and its binary directory (`/usr/lib/postgresql/<major>/bin`). */
  major: number;
  binDir: string;
  log?: (msg: string) => void;
}

const SOURCES_FILE = '/etc/apt/sources.list.d/svc-platform-trixie-src.sources';
const DEBIAN_SOURCES = '/etc/apt/sources.list.d/debian.sources';
const DEBIAN_SOURCES_LIST = '/etc/apt/sources.list';

/** The server's library and extension directories, as Debian lays them out. */
function installDirs(major: number) {
  return { lib: `/usr/lib/postgresql/${major}/lib`, extension: `/usr/share/postgresql/${major}/extension` };
}

function isInstalled(major: number): boolean {
  const dirs = installDirs(major);
  return existsSync(join(dirs.lib, 'vector.so')) && existsSync(join(dirs.extension, 'vector.control'));
}

/**
 * Makes sure the server of `major` has pgvector's files: already there, copied from the cache, or
 * built from Debian's source package (about a minute; root or passwordless sudo needed for apt).
 * Returns false, having said why, when it cannot: the platform then runs with full-text search only.
 */
export async function ensurePgvectorInstalled(opts: PgvectorOptions): Promise<boolean> {
  if (isInstalled(opts.major)) return true;
  if (!isRoot()) {
    opts.log?.('pgvector is not installed and installing it needs root: vector search stays off (full-text search works)');
    return false;
  }
  const cache = cacheDir(`pgvector-pg${opts.major}`);
  const staged = join(cache, 'root');
  try {
    await withLock(join(cache, '.lock'), async () => {
      if (isInstalled(opts.major)) return;
      if (!existsSync(join(staged, installDirs(opts.major).lib.slice(1), 'vector.so'))) await buildInto(staged, opts);
      cpSync(staged, '/', { recursive: true });
    });
    return isInstalled(opts.major);
  } catch (error) {
    opts.log?.(`pgvector could not be built: ${error instanceof Error ? error.message : String(error)}; vector search stays off (full-text search works)`);
    return false;
  }
}

/** Builds pgvector from Debian's source package and installs it under `staged` (a DESTDIR), saying how it goes every few seconds. */
async function buildInto(staged: string, opts: PgvectorOptions): Promise<void> {
  const progress = reportProgress({ label: "building pgvector from Debian's source package", typical: 'about a minute', log: opts.log });
  try {
    await buildSource(staged, opts);
  } finally {
    progress.stop();
  }
}

async function buildSource(staged: string, opts: PgvectorOptions): Promise<void> {
  const log = opts.log;
  ensureSourceEntry();
  const aptGet = ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', '-o', 'DPkg::Lock::Timeout=300'];
  await exec(aptGet[0]!, [...aptGet.slice(1), 'update'], '/');
  await exec(aptGet[0]!, [...aptGet.slice(1), 'install', '-y', '--no-install-recommends', `postgresql-server-dev-${opts.major}`, 'build-essential', 'dpkg-dev'], '/');
  const work = mkdtempSync(join(tmpdir(), 'pgvector-src-'));
  try {
    await exec(aptGet[0]!, [...aptGet.slice(1), 'source', '--only-source', 'pgvector'], work);
    const source = readdirSync(work, { withFileTypes: true }).find((entry) => entry.isDirectory() && entry.name.startsWith('pgvector-'));
    if (!source) throw new Error(`apt-get source pgvector left no source tree in ${work}`);
    const dir = join(work, source.name);
    // No -march=native: the cached build must run on other machines of the same architecture.
    const make = [`PG_CONFIG=${join(opts.binDir, 'pg_config')}`, 'OPTFLAGS=', 'with_llvm=no'];
    await exec('make', ['-j2', ...make], dir);
    rmSync(staged, { recursive: true, force: true });
    await exec('make', ['install', ...make, `DESTDIR=${staged}`], dir);
    log?.(`built ${source.name}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Adds a `deb-src` entry for trixie (which packages pgvector 0.8) on the mirror the machine's own
 * Debian entry uses. Only sources come from it: no binary package of trixie is installed.
 */
function ensureSourceEntry(): void {
  if (existsSync(SOURCES_FILE)) return;
  const mirror = debianMirror();
  writeFileSync(
    SOURCES_FILE,
    ['# Written by the svc-platform setup to build pgvector from source (scripts/stack/pgvector.ts).', 'Types: deb-src', `URIs: ${mirror}`, 'Suites: trixie', 'Components: main', 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg', ''].join('\n'),
  );
}

function debianMirror(): string {
  const deb822 = existsSync(DEBIAN_SOURCES) ? readFileSync(DEBIAN_SOURCES, 'utf8') : '';
  for (const stanza of deb822.split(/\n\s*\n/)) {
    const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
    const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1] ?? '';
    if (uri && !/security/.test(uri) && !/-security/.test(suites)) return uri;
  }
  const list = existsSync(DEBIAN_SOURCES_LIST) ? readFileSync(DEBIAN_SOURCES_LIST, 'utf8') : '';
  const line = list.split('\n').find((l) => /^deb\s/.test(l) && !/security/.test(l));
  const uri = line?.split(/\s+/).find((part) => /^https?:\/\//.test(part));
  if (uri) return uri;
  throw new Error('no Debian mirror found in the apt sources to fetch pgvector\'s source package from');
}

/**
 * Creates the extension as the cluster's superuser (`adminUrl`) in `template1` and in each of
 * `databases` that exists. Returns whether every one has it now.
 */
export async function createVectorExtension(adminUrl: string, databases: string[], log?: (msg: string) => void): Promise<boolean> {
  let ok = true;
  for (const database of ['template1', ...databases]) {
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    const sql = postgres(url.toString(), { max: 1, connect_timeout: 10, onnotice: () => {} });
    try {
      await sql`create extension if not exists vector`;
    } catch (error) {
      ok = false;
      if ((error as { code?: string }).code !== '3D000') log?.(`could not create extension vector in ${database}: ${(error as Error).message}`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  return ok;
}

function exec(file: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${[file, ...args].join(' ')} failed: ${tail(stderr || stdout || error.message)}`, { cause: error }));
      else resolve(stdout);
    });
  });
}
