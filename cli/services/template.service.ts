import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientPackage } from '../package-info.ts';
import { BUILTIN_SOURCE, InvalidProjectError, readManifest, type Manifest } from './project.service.ts';

/**
 * The scaffold the client ships: the app template (`cli/templates/app/`) and the agent assets
 * (`cli/templates/agent/`), rendered for an app; how a project's files compare with them (drift);
 * and how they are written into a project without losing a file someone changed.
 */

const TEMPLATES = fileURLToPath(new URL('../templates/', import.meta.url));
export const APP_TEMPLATE_DIR = join(TEMPLATES, 'app');
export const AGENT_TEMPLATE_DIR = join(TEMPLATES, 'agent');
/** The version of this client, recorded with what it scaffolds. */
export const CLIENT_VERSION: string = clientPackage().version;

/**
 * - `managed`: the template's own code; kept equal to the template (`svc init --current-dir`
 *   updates it, backing up a copy someone edited).
 * - `seeded`: written once, then the project's (configuration, object types, pages, README).
 * - `agent`: the agent assets (`svc agent refresh`).
 */
export type ScaffoldKind = 'managed' | 'seeded' | 'agent';

export interface ScaffoldFile {
  /** Relative to the project, with `/`. */
  path: string;
  kind: ScaffoldKind;
  content: Buffer;
}

/** What `{{name}}` tokens of the template stand for. */
export interface TemplateVars {
  appName: string;
  appKey: string;
}

/** Paths (or folders, ending in `/`) of the app template that become the project's once written. */
const SEEDED = ['svc.config.ts', 'src/svc.config/object-types.ts', 'README.md', 'package.json', '.gitignore', 'public/'];
/** Names the npm registry would drop or act on when the client is packed, renamed when scaffolded. */
const RENAMED: Record<string, string> = { _gitignore: '.gitignore' };
/** Never copied from a source: version-control metadata and installed packages. */
const SKIPPED = new Set(['.git', 'node_modules']);

const TEXT = /\.(m?[jt]s|json|md|html|css|txt|ya?ml|svg)$|(^|\/)[^./]+$|^\.|\/\./;

export const sha256 = (content: Buffer | string) => createHash('sha256').update(content).digest('hex');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && !relative(dir, join(e.parentPath, e.name)).split(sep).some((part) => SKIPPED.has(part)))
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

/** `{{appName}}` and `{{appKey}}` replaced in text files. */
export function render(path: string, content: Buffer, vars: TemplateVars): Buffer {
  if (!TEXT.test(path)) return content;
  const text = content.toString('utf8');
  if (!text.includes('{{')) return content;
  return Buffer.from(text.replace(/\{\{(appName|appKey)\}\}/g, (_whole, name: keyof TemplateVars) => vars[name]));
}

async function filesOf(dir: string, vars: TemplateVars, kindOf: (path: string) => ScaffoldKind): Promise<ScaffoldFile[]> {
  const files: ScaffoldFile[] = [];
  for (const source of await listFiles(dir)) {
    const path = source
      .split('/')
      .map((part) => RENAMED[part] ?? part)
      .join('/');
    files.push({ path, kind: kindOf(path), content: render(path, await readFile(join(dir, source)), vars) });
  }
  return files;
}

const isSeeded = (path: string) => SEEDED.some((entry) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry));

/** The app template that ships with the client, rendered for an app. */
export const appTemplateFiles = (vars: TemplateVars) => filesOf(APP_TEMPLATE_DIR, vars, (path) => (isSeeded(path) ? 'seeded' : 'managed'));

/** The agent assets that ship with the client. */
export const agentFiles = () => filesOf(AGENT_TEMPLATE_DIR, { appName: '', appKey: '' }, () => 'agent');

/** The files of another source (a cloned repository or a folder), rendered: the same rules as the built-in template. */
export const sourceFiles = (dir: string, vars: TemplateVars) => filesOf(dir, vars, (path) => (isSeeded(path) ? 'seeded' : 'managed'));

async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
    throw error;
  }
}

// Drift -------------------------------------------------------------------------------------------

/**
 * - `unchanged`: the project's file equals the client's template;
 * - `outdated`: it differs, but is what the client last wrote (the template moved on; updating loses nothing);
 * - `modified`: it differs and was edited since the client wrote it (updating needs a backup);
 * - `missing`: the project has no such file;
 * - `present`: a seeded file that exists (its content is the project's own).
 */
export type DriftStatus = 'unchanged' | 'outdated' | 'modified' | 'missing' | 'present';

export interface DriftEntry {
  path: string;
  kind: ScaffoldKind;
  status: DriftStatus;
}

export interface TemplateDriftReport {
  projectDir: string;
  /** Where the scaffold came from (`builtin:app`, or the `--from` source). */
  source: string;
  /** False when the scaffold came from another source: then only the agent assets are compared. */
  comparable: boolean;
  /** The client version that last wrote the scaffold files, and this client's. */
  scaffoldedWith: string;
  clientVersion: string;
  agent: boolean;
  files: DriftEntry[];
  summary: Record<DriftStatus, number>;
  /** Whether any file is outdated, modified or missing. */
  drift: boolean;
}

/** How one project file compares with the template's (`recorded`: its hash when the client last wrote it). */
export function compareFile(file: ScaffoldFile, current: Buffer | undefined, recorded: string | undefined): DriftStatus {
  if (!current) return 'missing';
  if (file.kind === 'seeded') return 'present';
  if (current.equals(file.content)) return 'unchanged';
  return recorded === sha256(current) ? 'outdated' : 'modified';
}

/** The scaffold files a project's manifest says it should have, rendered for it. */
export async function expectedFiles(manifest: Manifest): Promise<ScaffoldFile[]> {
  const app = manifest.template.source === BUILTIN_SOURCE ? await appTemplateFiles({ appName: manifest.app.name, appKey: manifest.app.key }) : [];
  return [...app, ...(manifest.template.agent ? await agentFiles() : [])];
}

/**
 * Compares a project's scaffold files with the client's template: each template file's status,
 * and a summary. Reads only; E005 (an `InvalidProjectError` naming the problems) when the
 * project's manifest is missing or invalid.
 */
export async function templateDrift(projectDir: string): Promise<TemplateDriftReport> {
  const { manifest, problems } = await readManifest(projectDir);
  if (!manifest) throw new InvalidProjectError(problems);
  const files: DriftEntry[] = [];
  for (const file of await expectedFiles(manifest)) {
    const current = await readIfPresent(join(projectDir, file.path));
    files.push({ path: file.path, kind: file.kind, status: compareFile(file, current, manifest.template.files[file.path]) });
  }
  const summary: Record<DriftStatus, number> = { unchanged: 0, outdated: 0, modified: 0, missing: 0, present: 0 };
  for (const entry of files) summary[entry.status]++;
  return {
    projectDir,
    source: manifest.template.source,
    comparable: manifest.template.source === BUILTIN_SOURCE,
    scaffoldedWith: manifest.template.clientVersion,
    clientVersion: CLIENT_VERSION,
    agent: manifest.template.agent,
    files,
    summary,
    drift: summary.outdated + summary.modified + summary.missing > 0,
  };
}

// Writing -----------------------------------------------------------------------------------------

/**
 * - `create`: the project has no such file;
 * - `update`: it differs from the template but is what the client last wrote;
 * - `conflict`: it differs and someone changed it (written only with a backup);
 * - `unchanged`: it equals the template;
 * - `keep`: a seeded file the project already has.
 */
export type SyncAction = 'create' | 'update' | 'conflict' | 'unchanged' | 'keep';

export interface SyncStep {
  path: string;
  kind: ScaffoldKind;
  action: SyncAction;
  /** Where the project's own copy was saved before it was replaced (conflicts written with backups). */
  backup?: string;
}

/** What writing `files` into `projectDir` would do, given the hashes the client recorded when it last wrote them. */
export async function planSync(projectDir: string, files: ScaffoldFile[], recorded: Record<string, string>): Promise<SyncStep[]> {
  const steps: SyncStep[] = [];
  for (const file of files) {
    const status = compareFile(file, await readIfPresent(join(projectDir, file.path)), recorded[file.path]);
    const action: SyncAction = { missing: 'create', present: 'keep', unchanged: 'unchanged', outdated: 'update', modified: 'conflict' }[status] as SyncAction;
    steps.push({ path: file.path, kind: file.kind, action });
  }
  return steps;
}

/** A name beside `path` that no file has: `<path>.bak`, else `<path>.bak.2`, `.bak.3`, ... */
async function backupName(projectDir: string, path: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = `${path}.bak${n === 1 ? '' : `.${n}`}`;
    if (!(await readIfPresent(join(projectDir, candidate)))) return candidate;
  }
}

/**
 * Writes the steps of a plan: creates and updates always, conflicts only with `conflicts:
 * 'backup'` (the project's copy is first saved beside it, see {@link SyncStep.backup}); `keep`
 * and `unchanged` write nothing. Returns the steps (with their backups) and the hash of every
 * file now equal to the template, for the manifest.
 */
export async function applySync(
  projectDir: string,
  files: ScaffoldFile[],
  steps: SyncStep[],
  options: { conflicts: 'backup' | 'skip' },
): Promise<{ steps: SyncStep[]; hashes: Record<string, string> }> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const hashes: Record<string, string> = {};
  const done: SyncStep[] = [];
  for (const step of steps) {
    const file = byPath.get(step.path)!;
    const target = join(projectDir, step.path);
    if (step.action === 'conflict' && options.conflicts === 'skip') {
      done.push(step);
      continue;
    }
    let backup: string | undefined;
    if (step.action === 'conflict') {
      backup = await backupName(projectDir, step.path);
      await copyFile(target, join(projectDir, backup));
    }
    if (step.action === 'create' || step.action === 'update' || step.action === 'conflict') {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
    if (step.action !== 'keep') hashes[step.path] = sha256(file.content);
    done.push(backup ? { ...step, backup } : step);
  }
  return { steps: done, hashes };
}
