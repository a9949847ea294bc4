import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { CliError, invalidInput } from '../errors.ts';
import { clientPackage, type ClientPackage } from '../package-info.ts';
import { createApiClient } from './api-client.ts';

/**
 * Releases of the client, read from a registry that speaks the npm registry protocol: the
 * package document at `<registry>/<name>` (`@scope%2fname` for a scoped name) and its
 * `dist-tags.latest`. The registry is `SVC_REGISTRY_URL`, else npm's own setting for the
 * client's scope or its `registry` (`npm config get`), so a company registry configured for npm
 * serves `svc update` too. Installing goes through npm, into the place the client was installed.
 */

export interface ReleaseStatus {
  name: string;
  current: string;
  latest: string;
  registry: string;
  /** `latest` is newer than the running client. */
  updateAvailable: boolean;
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Semantic-version precedence of `a` against `b`: negative, 0 or positive. Build metadata is ignored; a prerelease comes before its release. */
export function compareVersions(a: string, b: string): number {
  const [pa, pb] = [SEMVER.exec(a), SEMVER.exec(b)];
  if (!pa || !pb) throw invalidInput(`not a semantic version: ${!pa ? a : b}`);
  for (let i = 1; i <= 3; i++) {
    const diff = Number(pa[i]) - Number(pb[i]);
    if (diff) return diff;
  }
  const [ra, rb] = [pa[4], pb[4]];
  if (ra === rb) return 0;
  if (ra === undefined) return 1;
  if (rb === undefined) return -1;
  const [xa, xb] = [ra.split('.'), rb.split('.')];
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const [ia, ib] = [xa[i], xb[i]];
    if (ia === undefined) return -1;
    if (ib === undefined) return 1;
    if (ia === ib) continue;
    const [na, nb] = [/^\d+$/.test(ia), /^\d+$/.test(ib)];
    if (na && nb) return Number(ia) - Number(ib);
    if (na !== nb) return na ? -1 : 1;
    return ia < ib ? -1 : 1;
  }
  return 0;
}

async function npmCommand(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('npm', args, { timeout: 30_000, shell: process.platform === 'win32', env: { ...process.env, npm_config_update_notifier: 'false' } });
  return stdout;
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** The registry the client's releases are read from (see the module's comment); E006 when none can be found. */
export async function registryUrl(name = clientPackage().name): Promise<string> {
  const configured = process.env['SVC_REGISTRY_URL'];
  let url = configured;
  if (!url) {
    const scope = name.startsWith('@') ? name.split('/')[0] : undefined;
    const keys = [...(scope ? [`${scope}:registry`] : []), 'registry'];
    let answer: string;
    try {
      answer = await npmCommand(['config', 'get', ...keys]);
    } catch (error) {
      throw new CliError('E006', { details: `the release registry: set SVC_REGISTRY_URL, or install npm (npm config get registry failed: ${(error as Error).message.split('\n')[0]})` });
    }
    const values = keys.length === 1 ? { registry: answer.trim() } : Object.fromEntries(answer.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    url = [scope ? values[`${scope}:registry`] : undefined, values['registry']].find((v) => v && v !== 'undefined' && v !== 'null');
  }
  if (!url || !/^https?:\/\//.test(url)) throw new CliError('E006', { details: `the release registry ${url ?? '(none)'} is not an http(s) address${configured ? ' (SVC_REGISTRY_URL)' : ''}` });
  return withSlash(url);
}

/** The package document's path on a registry: `@scope%2fname` for a scoped package, as npm asks for it. */
const documentPath = (name: string) => `/${name.replace('/', '%2f')}`;

/** The running client against the registry's `latest`. E201 when the registry does not answer, E202 when it has no such package. */
export async function releaseStatus(pkg: ClientPackage = clientPackage()): Promise<ReleaseStatus> {
  const registry = await registryUrl(pkg.name);
  const api = createApiClient({ baseUrl: registry.replace(/\/+$/, '') });
  const { body } = await api.request<{ 'dist-tags'?: { latest?: unknown } }>('GET', documentPath(pkg.name), {
    auth: false,
    // The abbreviated document: the dist-tags and versions, without every version's readme.
    headers: { accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' },
    subject: `Package ${pkg.name} in the release registry ${registry}`,
  });
  const latest = body?.['dist-tags']?.latest;
  if (typeof latest !== 'string' || !SEMVER.test(latest)) {
    throw new CliError('E203', { details: `the release registry ${registry} names no latest version of ${pkg.name}` });
  }
  return { name: pkg.name, current: pkg.version, latest, registry, updateAvailable: compareVersions(latest, pkg.version) > 0 };
}

/**
 * Where the running client was installed:
 * - `global`: `npm install -g` (`<prefix>/lib/node_modules/<name>`, or `<prefix>/node_modules/<name>` on Windows);
 * - `project`: a project's dependency (`<project>/node_modules/<name>` beside its package.json);
 * - `source`: a checkout of the platform's repository (no npm install to update).
 */
export type InstallLocation = { kind: 'global'; prefix: string } | { kind: 'project'; dir: string } | { kind: 'source'; dir: string };

export function installLocation(pkg: ClientPackage = clientPackage()): InstallLocation {
  const depth = pkg.name.split('/').length;
  let modules = pkg.root;
  for (let i = 0; i < depth; i++) modules = dirname(modules);
  if (basename(modules) !== 'node_modules') return { kind: 'source', dir: pkg.root };
  const above = dirname(modules);
  if (process.platform !== 'win32' && basename(above) === 'lib' && !existsSync(join(above, 'package.json'))) return { kind: 'global', prefix: dirname(above) };
  if (process.platform === 'win32' && !existsSync(join(above, 'package.json'))) return { kind: 'global', prefix: above };
  return { kind: 'project', dir: above };
}

/** Where an update would go; E305 for a client run from a source checkout, which npm did not install. */
export function updatableLocation(pkg: ClientPackage = clientPackage()): Exclude<InstallLocation, { kind: 'source' }> {
  const location = installLocation(pkg);
  if (location.kind === 'source') {
    throw invalidInput(`this client runs from a source checkout (${location.dir}), not an npm installation: update the checkout (git pull, then npm run build:cli), or install the release with npm install -g ${pkg.name}`);
  }
  return location;
}

export interface UpdateResult extends ReleaseStatus {
  /** What happened: installed the newer release, nothing to do, or the running client is newer than the release. */
  action: 'updated' | 'up-to-date' | 'ahead';
  installedIn?: string;
}

/**
 * Installs the registry's latest release over the running client with npm, in the same place
 * (`npm install -g --prefix <prefix>`, or `npm install` in the project that depends on it); npm's
 * own output goes to stderr. Does nothing when the client is up to date. E305 for a client run
 * from a source checkout, E203 when npm fails.
 */
export async function updateClient(status: ReleaseStatus, pkg: ClientPackage = clientPackage()): Promise<UpdateResult> {
  if (!status.updateAvailable) return { ...status, action: compareVersions(status.current, status.latest) > 0 ? 'ahead' : 'up-to-date' };
  const location = updatableLocation(pkg);
  const spec = `${pkg.name}@${status.latest}`;
  const args =
    location.kind === 'global'
      ? ['install', '--global', '--prefix', location.prefix, spec, '--registry', status.registry]
      : ['install', spec, '--registry', status.registry];
  const cwd = location.kind === 'global' ? location.prefix : location.dir;
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('npm', [...args, '--no-audit', '--no-fund'], {
      cwd,
      shell: process.platform === 'win32',
      stdio: ['ignore', process.stderr, process.stderr],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? invalidInput('npm is not installed: svc update installs the release with it') : error));
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  if (code !== 0) throw new CliError('E203', { details: `npm ${args.join(' ')} exited with code ${code}` });
  const installed = (JSON.parse(readFileSync(join(pkg.root, 'package.json'), 'utf8')) as { version?: string }).version;
  if (installed !== status.latest) throw new CliError('E203', { details: `npm reported success, but ${pkg.root} holds version ${installed ?? 'none'}, not ${status.latest}` });
  return { ...status, action: 'updated', installedIn: cwd };
}
