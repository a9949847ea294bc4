import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CliError, invalidInput } from '../errors.ts';
import type { ApiClient } from './api-client.ts';
import { createAppsService, type AppEnrollment, type CapabilityEvaluation } from './apps.service.ts';
import { updateEnvFile } from './env-file.ts';
import { createTenantsService } from './tenants.service.ts';
import { BUILTIN_SOURCE, CONFIG_FILE, ENV_FILE, InvalidProjectError, readManifest, type Manifest, type PackageProfile } from './project.service.ts';
import {
  agentFiles,
  appTemplateFiles,
  applySync,
  CLIENT_VERSION,
  planSync,
  sourceFiles,
  type ScaffoldFile,
  type SyncStep,
  type TemplateVars,
} from './template.service.ts';

const run = promisify(execFile);

/** App names: a folder name that is safe in the pages and code the template renders it into. */
const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;
const OBJECT_TYPES_FILE = 'src/svc.config/object-types.ts';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** What a git `--from` looks like: a URL git speaks, or scp-like `user@host:path`. */
const GIT_URL = /^(?:(?:https?|ssh|git|file):\/\/|[\w.-]+@[\w.-]+:)/;

/** `My App` -> `my-app`: the app key (and package name). */
export const appKeyOf = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');

export interface InitTarget {
  directory: string;
  name: string;
  key: string;
  /** The manifest of a project already there (`--current-dir` in a project). */
  previous?: Manifest;
}

/** The folder and app name `init` works with; refuses (E305) a bad name or a folder it would overwrite. */
export async function resolveTarget(options: { name?: string; currentDir: boolean; cwd: string }): Promise<InitTarget> {
  const directory = options.currentDir ? resolve(options.cwd) : resolve(options.cwd, options.name ?? '');
  const previous = options.currentDir ? (await readManifest(directory)).manifest : undefined;
  const name = options.name ?? previous?.app.name ?? basename(directory);
  if (!APP_NAME.test(name)) throw invalidInput(`app name "${name}" must start with a letter or digit and hold only letters, digits, spaces, ".", "_" and "-" (at most 100)`);
  if (!options.currentDir && name.trim() !== name) throw invalidInput(`app name "${name}" must not end with a space`);
  const key = previous?.app.key ?? appKeyOf(name);
  if (!key) throw invalidInput(`app name "${name}" has no letters or digits to make a key of`);
  if (!options.currentDir) {
    const entries = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      if (error.code === 'ENOTDIR') throw invalidInput(`${directory} exists and is not a folder`);
      throw error;
    });
    if (entries.length > 0) throw invalidInput(`${directory} exists and is not empty: to scaffold into it, run svc init --current-dir there`);
  }
  return { directory, name, key, previous };
}

/** Whether `--from` names a git repository (else it is a local folder). */
export const isGitSource = (from: string) => GIT_URL.test(from) || /\.git(#.*)?$/.test(from);

async function cloneSource(from: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const [url, ref] = from.split('#') as [string, string | undefined];
  const parent = await mkdtemp(join(tmpdir(), 'svc-init-'));
  const dir = join(parent, 'source');
  const cleanup = () => rm(parent, { recursive: true, force: true });
  try {
    await run('git', ['clone', '--quiet', '--depth', '1', ...(ref ? ['--branch', ref] : []), '--', url, dir], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      timeout: 300_000,
    });
  } catch (error) {
    await cleanup();
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT') throw invalidInput(`--from ${from}: git is not installed, and cloning needs it`);
    const reason = (failure.stderr ?? '').trim().split('\n').filter(Boolean).pop() ?? failure.message;
    throw invalidInput(`--from ${from}: git clone failed: ${reason.replace(/^fatal: /, '')}`);
  }
  return { dir, cleanup };
}

/**
 * The files to scaffold: the template that ships with the client, or the `--from` source (a git
 * URL, cloned, or a local folder), rendered for the app; then the agent assets unless `agent` is
 * false. A source without `svc.config.ts` or the object-types file gets the template's. E005
 * when the result is not a runnable app (no `package.json` with a `dev` script).
 */
export async function stageFiles(options: { from?: string; agent: boolean; vars: TemplateVars; directory: string }): Promise<{ source: string; files: ScaffoldFile[] }> {
  let source = BUILTIN_SOURCE;
  let files: ScaffoldFile[];
  if (options.from === undefined) {
    files = await appTemplateFiles(options.vars);
  } else if (isGitSource(options.from)) {
    source = options.from;
    const clone = await cloneSource(options.from);
    try {
      files = await sourceFiles(clone.dir, options.vars);
    } finally {
      await clone.cleanup();
    }
  } else {
    const dir = resolve(options.from);
    const kind = await stat(dir).catch(() => undefined);
    if (!kind?.isDirectory()) throw invalidInput(`--from ${options.from}: no such folder (give a folder or a git URL)`);
    if (dir === options.directory) throw invalidInput(`--from ${options.from} is the folder being scaffolded`);
    source = dir;
    files = await sourceFiles(dir, options.vars);
  }
  if (source !== BUILTIN_SOURCE) {
    const builtin = await appTemplateFiles(options.vars);
    for (const path of [CONFIG_FILE, OBJECT_TYPES_FILE]) if (!files.some((f) => f.path === path)) files.push(builtin.find((f) => f.path === path)!);
  }
  const pkg = files.find((f) => f.path === 'package.json');
  let scripts: Record<string, unknown> | undefined;
  try {
    scripts = pkg ? (JSON.parse(pkg.content.toString('utf8')) as { scripts?: Record<string, unknown> }).scripts : undefined;
  } catch {
    scripts = undefined;
  }
  if (typeof scripts?.['dev'] !== 'string') throw new InvalidProjectError(['the source has no package.json with a "dev" script, which svc dev runs']);
  if (options.agent) {
    for (const file of await agentFiles()) if (!files.some((f) => f.path === file.path)) files.push(file);
  }
  return { source, files };
}

/** The tenant boundary and app the platform step ends with. */
export interface PlatformBinding {
  status: 'created' | 'bound' | 'skipped';
  /** Why the app was not created or bound (not logged in, no company tenant). */
  reason?: string;
  app?: AppEnrollment;
  capabilities?: CapabilityEvaluation & { tenant: string };
  /** The capability evaluation failed (the app is enrolled all the same). */
  capabilitiesError?: string;
}

export interface BindRequest {
  companyTenant: string;
  name: string;
  key: string;
  childTenant?: string;
  parentTenant?: string;
}

/**
 * Creates the app under the company tenant, or binds to the one it already has under the key,
 * then evaluates the capabilities of the tenant the app runs in (its child tenant, once usable,
 * else the company tenant). Not logged in (E101, E102) is a skip, not a failure.
 */
export async function bindApp(api: () => Promise<ApiClient>, request: BindRequest): Promise<PlatformBinding> {
  let apps: ReturnType<typeof createAppsService>;
  let created: { status: 'created' | 'bound'; app: AppEnrollment };
  try {
    apps = createAppsService(await api());
    created = await apps.createOrBind(request.companyTenant, {
      name: request.name,
      key: request.key,
      ...(request.childTenant ? { childTenant: { name: request.childTenant } } : {}),
      ...(request.parentTenant ? { parentTenant: request.parentTenant } : {}),
    });
  } catch (error) {
    if (error instanceof CliError && (error.code === 'E101' || error.code === 'E102')) return { status: 'skipped', reason: error.code === 'E101' ? 'not logged in' : 'the login expired' };
    throw error;
  }
  // An enrollment read back names its company tenant as it was asked for: the id, for the manifest.
  if (created.status === 'bound' && !UUID.test(created.app.companyTenantId)) {
    created.app.companyTenantId = (await createTenantsService(await api()).find(created.app.companyTenantId)).id;
  }
  const tenant = created.app.childTenantId ?? created.app.companyTenantId;
  try {
    // A child tenant is provisioned after it is made: its capabilities can be read once it is usable.
    if (created.app.childTenantId) await createTenantsService(await api()).waitUntilUsable(created.app.childTenantId);
    const capabilities = await apps.evaluateCapabilities(tenant);
    return { ...created, capabilities: { ...capabilities, tenant } };
  } catch (error) {
    return { ...created, capabilitiesError: error instanceof CliError ? `${error.code} ${error.message}` : String(error) };
  }
}

export type FileStep = Omit<SyncStep, 'action'> & { action: SyncStep['action'] | 'merge' };

/** Template keys a project's package.json lacks, added without changing what it has. */
function mergePackageJson(current: string, template: Buffer): string | undefined {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(current) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const wanted = JSON.parse(template.toString('utf8')) as Record<string, unknown>;
  let changed = false;
  for (const [key, value] of Object.entries(wanted)) {
    if (key === 'scripts') {
      const scripts = (pkg['scripts'] ??= {}) as Record<string, unknown>;
      for (const [name, script] of Object.entries(value as Record<string, unknown>)) {
        if (scripts[name] === undefined) {
          scripts[name] = script;
          changed = true;
        }
      }
    } else if (pkg[key] === undefined) {
      pkg[key] = value;
      changed = true;
    }
  }
  return changed ? JSON.stringify(pkg, null, 2) + '\n' : undefined;
}

/** `.gitignore` with the template's lines it lacks appended. */
function mergeLines(current: string, template: Buffer): string | undefined {
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = template
    .toString('utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() && !have.has(l.trim()));
  if (!missing.length) return undefined;
  return `${current.replace(/\n?$/, '\n')}${missing.join('\n')}\n`;
}

/**
 * Writes the scaffold into the folder: new files created, the client's own files that someone
 * changed saved as `<file>.bak` before they are replaced, seeded files kept (package.json and
 * .gitignore get what they lack merged in). Other files are not touched.
 */
export async function writeScaffold(directory: string, files: ScaffoldFile[], recorded: Record<string, string>): Promise<{ steps: FileStep[]; hashes: Record<string, string> }> {
  await mkdir(directory, { recursive: true });
  const plan = await planSync(directory, files, recorded);
  const { steps, hashes } = await applySync(directory, files, plan, { conflicts: 'backup' });
  const merged: FileStep[] = [];
  for (const step of steps) {
    const merge = step.path === 'package.json' ? mergePackageJson : step.path === '.gitignore' ? mergeLines : undefined;
    if (step.action !== 'keep' || !merge) {
      merged.push(step);
      continue;
    }
    const next = merge(await readFile(join(directory, step.path), 'utf8'), files.find((f) => f.path === step.path)!.content);
    if (next !== undefined) await writeFile(join(directory, step.path), next);
    merged.push(next === undefined ? step : { ...step, action: 'merge' });
  }
  return { steps: merged, hashes };
}

const ENV_COMMENTS: Record<string, string> = {
  BASE_URL_PUBLIC_API: "The platform's address (REST v3 for the pages, the identity provider for sign-in).",
  SVC_IDP_ISSUER: "The identity provider; empty means the platform's built-in one at BASE_URL_PUBLIC_API.",
  SVC_IDP_CLIENT_ID: "The app's sign-in client at the identity provider: svc provision idp writes these two.",
};

/**
 * Creates `.env.local`, or adds the keys it lacks (keeping comments, other keys and every value
 * already set). Readable by its owner only: it holds the client secret.
 */
export async function writeEnvFile(directory: string, values: { baseUrl?: string; appKey: string }): Promise<{ path: string; added: string[] }> {
  const path = join(directory, ENV_FILE);
  const header = ['Settings of this machine for the app; not committed (see .gitignore).', 'Tenant selection comes from `svc login` and `svc tenant select`, not from tenant ids here.'];
  const wanted = { BASE_URL_PUBLIC_API: values.baseUrl ?? '', SVC_IDP_ISSUER: '', SVC_IDP_CLIENT_ID: '', SVC_IDP_CLIENT_SECRET: '', SVC_APP_KEY: values.appKey };
  const changes = await updateEnvFile(path, Object.entries(wanted).map(([key, value]) => ({ key, value, comment: ENV_COMMENTS[key] })), { onlyMissing: true, header });
  await chmod(path, 0o600);
  return { path, added: changes.filter((change) => change.action === 'added').map((change) => change.key) };
}

/** The manifest after init: what was there, with this run's choices and the hashes of the files written. */
export function nextManifest(
  previous: Manifest | undefined,
  run: {
    name: string;
    key: string;
    source: string;
    agent: boolean;
    packageProfile?: PackageProfile;
    companyTenant?: { id: string; slug: string | null };
    parentTenant?: string;
    childTenant?: string;
    binding: PlatformBinding;
    hashes: Record<string, string>;
  },
): Manifest {
  const app = run.binding.app;
  const child = app?.childTenantId
    ? { name: run.childTenant ?? previous?.tenancy.childTenant?.name ?? app.childTenantSlug ?? run.name, slug: app.childTenantSlug, id: app.childTenantId }
    : run.childTenant
      ? { name: run.childTenant, slug: null, id: null }
      : (previous?.tenancy.childTenant ?? null);
  const company = app
    ? { id: app.companyTenantId, slug: run.companyTenant?.slug ?? (previous?.tenancy.companyTenant?.id === app.companyTenantId ? previous.tenancy.companyTenant.slug : null) }
    : (run.companyTenant ?? previous?.tenancy.companyTenant ?? null);
  return {
    manifestVersion: 1,
    app: { name: run.name, key: run.key, id: app?.id ?? previous?.app.id ?? null },
    packageProfile: run.packageProfile ?? previous?.packageProfile ?? 'external',
    tenancy: { companyTenant: company, parentTenant: run.parentTenant ?? previous?.tenancy.parentTenant ?? null, childTenant: child },
    template: {
      source: run.source,
      clientVersion: CLIENT_VERSION,
      agent: run.agent,
      files: { ...(previous?.template.files ?? {}), ...run.hashes },
    },
  };
}

/** `git init` with a first commit, unless the folder is already inside a work tree. */
export async function initGit(directory: string, name: string): Promise<{ status: 'initialised' | 'committed' | 'existing' | 'unavailable'; note?: string }> {
  const git = (args: string[]) => run('git', args, { cwd: directory, timeout: 60_000 });
  try {
    const inside = await git(['rev-parse', '--is-inside-work-tree']).then(
      (r) => r.stdout.trim() === 'true',
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw error;
        return false;
      },
    );
    if (inside) return { status: 'existing' };
    await git(['init', '--quiet', '--initial-branch=main']);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'unavailable', note: 'git is not installed: no repository was made' };
    throw error;
  }
  try {
    await git(['add', '--all']);
    await git(['commit', '--quiet', '--message', `Scaffold ${name} with svc init`]);
    return { status: 'committed' };
  } catch {
    return { status: 'initialised', note: 'git has no user name or email here: the files are staged; commit them yourself' };
  }
}

/** `npm install` in the folder: the template has no dependencies, so this works offline. */
export async function installDependencies(directory: string): Promise<{ status: 'installed' | 'failed' | 'unavailable'; note?: string }> {
  try {
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: directory,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { status: 'installed' };
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT') return { status: 'unavailable', note: 'npm is not installed: run your package manager\'s install yourself' };
    const reason = (failure.stderr ?? failure.message).trim().split('\n').filter(Boolean).slice(-3).join(' ');
    return { status: 'failed', note: `npm install failed (run it again in the folder): ${reason}` };
  }
}
