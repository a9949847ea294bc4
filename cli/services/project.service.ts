import { randomBytes } from 'node:crypto';
import { access, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CliError } from '../errors.ts';
import { CONFIG_FILE, ENV_FILE, MANIFEST_FILE, findProjectRoot, requireProjectRoot } from './project-root.ts';
import { BUILTIN_SOURCE, PACKAGE_PROFILES, type PackageProfile } from './project.constants.ts';
import { importTypeScript } from './ts-module.ts';

export { BUILTIN_SOURCE, CONFIG_FILE, ENV_FILE, MANIFEST_FILE, PACKAGE_PROFILES, findProjectRoot, requireProjectRoot, type PackageProfile };

const exists = (path: string) => access(path).then(() => true, () => false);

/**
 * An svc project on disk: the folder with `svc.config.ts` (the configuration the client reads)
 * and `svc.project.json` (the manifest `svc init` writes: the app, its company and child tenant,
 * the package profile, and what was scaffolded).
 */


const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const ManifestSchema = z
  .object({
    manifestVersion: z.literal(1),
    app: z.object({
      name: z.string().min(1),
      key: z.string().regex(KEBAB, 'must be kebab-case'),
      /** The enrollment's id on the platform, once created or bound. */
      id: z.string().nullable(),
    }),
    packageProfile: z.enum(PACKAGE_PROFILES),
    /** The tenant boundary: the company tenant the app is enrolled in, and the child tenant it runs in, if any. */
    tenancy: z.object({
      companyTenant: z.object({ id: z.string().min(1), slug: z.string().nullable() }).nullable(),
      parentTenant: z.string().nullable(),
      childTenant: z.object({ name: z.string().min(1), slug: z.string().nullable(), id: z.string().nullable() }).nullable(),
    }),
    template: z.object({
      /** `builtin:app`, or the `--from` git URL or path. */
      source: z.string().min(1),
      /** The client version that last wrote the scaffold files. */
      clientVersion: z.string(),
      /** Whether the agent assets are part of the project (`--no-agent` leaves them out). */
      agent: z.boolean(),
      /** SHA-256 (hex) of each scaffold file as the client last wrote it: a file that still has it was not edited. */
      files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
    }),
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;

/** E005, with what is wrong (the command shows each problem before the error). */
export class InvalidProjectError extends CliError {
  constructor(readonly problems: string[]) {
    super('E005');
  }
}

/** The manifest, or what is wrong with it. */
export async function readManifest(root: string): Promise<{ manifest?: Manifest; problems: string[] }> {
  let text: string;
  try {
    text = await readFile(join(root, MANIFEST_FILE), 'utf8');
  } catch {
    return { problems: [`${MANIFEST_FILE} is missing (svc init --current-dir writes it)`] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problems: [`${MANIFEST_FILE} is not JSON: ${(error as Error).message}`] };
  }
  const parsed = ManifestSchema.safeParse(value);
  if (!parsed.success) return { problems: parsed.error.issues.map((i) => `${MANIFEST_FILE}: ${i.path.join('.') || '(top)'} ${i.message}`) };
  return { manifest: parsed.data, problems: [] };
}

/** Writes the manifest whole (under a temporary name, then renamed). */
export async function writeManifest(root: string, manifest: Manifest): Promise<void> {
  const path = join(root, MANIFEST_FILE);
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, JSON.stringify(ManifestSchema.parse(manifest), null, 2) + '\n');
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

/** What makes `root` not a runnable project: each problem in a line (empty when it is one). */
export async function projectProblems(root: string): Promise<string[]> {
  const problems: string[] = [];
  if (!(await exists(join(root, CONFIG_FILE)))) problems.push(`${CONFIG_FILE} is missing`);
  problems.push(...(await readManifest(root)).problems);
  let pkg: { scripts?: Record<string, unknown> } | undefined;
  try {
    pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as typeof pkg;
  } catch (error) {
    problems.push((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'package.json is missing' : `package.json is not JSON: ${(error as Error).message}`);
  }
  if (pkg && typeof pkg.scripts?.['dev'] !== 'string') problems.push('package.json has no "dev" script');
  return problems;
}

/** What `svc.config.ts` says; the fields the client reads, with their defaults. */
export interface ProjectConfig {
  app: { name?: string; key?: string };
  env: { required: string[]; file: string };
  objectTypes: string;
}

const ConfigSchema = z.object({
  app: z.object({ name: z.string().optional(), key: z.string().optional() }).default({}),
  env: z.object({ required: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be variable names')).default([]), file: z.string().default(ENV_FILE) }).default({ required: [], file: ENV_FILE }),
  objectTypes: z.string().default('src/svc.config/object-types.ts'),
});

/** Loads `svc.config.ts` (its default export, or `config`); E006 when it does not load or has the wrong shape. */
export async function loadProjectConfig(root: string): Promise<ProjectConfig> {
  const file = join(root, CONFIG_FILE);
  let module: { default?: unknown; config?: unknown };
  try {
    module = await importTypeScript<typeof module>(file);
  } catch (error) {
    const message = (error as Error).message.split('\n')[0];
    throw new CliError('E006', { details: `${CONFIG_FILE}: ${message}` }, { cause: error });
  }
  const raw = module.config ?? (module.default as { default?: unknown } | undefined)?.default ?? module.default;
  const parsed = ConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) throw new CliError('E006', { details: `${CONFIG_FILE}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}` });
  return parsed.data;
}
