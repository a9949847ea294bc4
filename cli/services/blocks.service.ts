import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from '../errors.ts';
import { PACKAGE_PROFILES, type Coupling, type GroupBy, type Lane, type PackageProfile, type Readiness } from './blocks.constants.ts';
import { BlockCatalogSchema, type BlockCatalog, type BlockManifest } from './blocks.schema.ts';
import { findProjectRoot, readManifest } from './project.service.ts';

/** The catalog that ships with the client. */
export const CATALOG_FILE = fileURLToPath(new URL('../blocks/catalog.json', import.meta.url));
/** A project's own blocks, beside svc.config.ts. */
export const CUSTOM_FILE = 'svc.blocks.json';

/** A block and where it is described: the client's catalog or the project's `svc.blocks.json`. */
export type Block = BlockManifest & { source: 'catalog' | 'custom' };

export interface Problem {
  /** Where in the file: `blocks[3] (geo).readiness`. */
  at: string;
  message: string;
}

export interface ValidationReport {
  file: string;
  blocks: number;
  errors: Problem[];
  warnings: Problem[];
}

const at = (catalog: { blocks?: unknown }, index: number, field?: string) => {
  const id = (catalog.blocks as Array<{ id?: unknown }> | undefined)?.[index]?.id;
  return `blocks[${index}]${typeof id === 'string' ? ` (${id})` : ''}${field ? `.${field}` : ''}`;
};

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError('E003', { file });
    throw new CliError('E006', { details: `${file}: ${(error as Error).message}` });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError('E301', { details: `${file} is not JSON: ${(error as Error).message}` });
  }
}

/** What the JSON Schema of a catalog finds wrong (errors), before any check between blocks. */
function schemaProblems(value: unknown): { catalog?: BlockCatalog; errors: Problem[] } {
  const parsed = BlockCatalogSchema.safeParse(value);
  if (parsed.success) return { catalog: parsed.data, errors: [] };
  const errors = parsed.error.issues.map((issue) => {
    const [first, index, ...rest] = issue.path;
    const where = first === 'blocks' && typeof index === 'number' ? at(value as { blocks?: unknown }, index, rest.join('.') || undefined) : issue.path.join('.') || '(top)';
    return { at: where, message: issue.message };
  });
  return { errors };
}

/**
 * Checks between blocks and of each block's sense. Errors: an id used twice, or taken from the
 * client's catalog by a project's block; a required block that exists nowhere. Warnings (failures
 * with `--strict`): an internal-only or internal-readiness block offered to the external profile;
 * an adapter coupling without the adapter named, or an adapter named for another coupling; a
 * blocked block without its reason, or a reason on one that is not blocked; a public-ready block
 * that requires one that is not; a block that provides nothing.
 */
export function catalogProblems(catalog: BlockCatalog, shipped: BlockManifest[] | undefined): { errors: Problem[]; warnings: Problem[] } {
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const known = new Map<string, BlockManifest>((shipped ?? []).map((b) => [b.id, b]));
  const seen = new Map<string, number>();
  catalog.blocks.forEach((block, i) => {
    if (seen.has(block.id)) errors.push({ at: at(catalog, i, 'id'), message: `${block.id} is also the id of blocks[${seen.get(block.id)}]` });
    else if (known.has(block.id)) errors.push({ at: at(catalog, i, 'id'), message: `${block.id} is the id of a block of the client's catalog: choose another` });
    seen.set(block.id, i);
  });
  const all = new Map<string, BlockManifest>([...known, ...catalog.blocks.map((b): [string, BlockManifest] => [b.id, b])]);
  catalog.blocks.forEach((block, i) => {
    const warn = (field: string, message: string) => warnings.push({ at: at(catalog, i, field), message });
    for (const required of block.requires ?? []) {
      const target = all.get(required);
      if (required === block.id) errors.push({ at: at(catalog, i, 'requires'), message: 'a block cannot require itself' });
      else if (!target) errors.push({ at: at(catalog, i, 'requires'), message: `no block ${required} in ${shipped ? "this file or the client's catalog" : 'this file'}` });
      else if (block.readiness === 'public-ready' && target.readiness !== 'public-ready') warn('requires', `public-ready, but requires ${required}, which is ${target.readiness}`);
    }
    if (block.packageProfiles.includes('external') && block.coupling === 'internal-only') warn('packageProfiles', 'internal-only, but offered to the external profile');
    if (block.packageProfiles.includes('external') && block.readiness === 'internal') warn('packageProfiles', 'readiness internal, but offered to the external profile');
    if (block.coupling === 'external-with-adapter' && !block.adapter) warn('adapter', 'external-with-adapter, but names no adapter');
    if (block.adapter && block.coupling !== 'external-with-adapter') warn('adapter', `names an adapter, but its coupling is ${block.coupling}`);
    if (block.readiness === 'blocked' && !block.blockedReason) warn('blockedReason', 'blocked, but says not why');
    if (block.blockedReason && block.readiness !== 'blocked') warn('blockedReason', `gives a reason to be blocked, but its readiness is ${block.readiness}`);
    if (!Object.values(block.provides).some((list) => list && list.length)) warn('provides', 'provides nothing');
  });
  return { errors, warnings };
}

/** The client's own catalog (it is valid: a test holds it to `--strict`). */
export async function shippedBlocks(): Promise<BlockManifest[]> {
  return BlockCatalogSchema.parse(await readJson(CATALOG_FILE)).blocks;
}

/** The project's `svc.blocks.json`, if the current folder is in a project that has one. */
async function customFile(cwd = process.cwd()): Promise<string | undefined> {
  const root = await findProjectRoot(cwd);
  if (!root) return undefined;
  const file = join(root, CUSTOM_FILE);
  return (await readFile(file).then(() => true, () => false)) ? file : undefined;
}

/** The project's blocks; E001 outside a project, E003 without svc.blocks.json, E301 when it is invalid. */
async function customBlocks(options: { required: boolean }): Promise<{ file?: string; blocks: BlockManifest[] }> {
  const file = await customFile();
  if (!file) {
    if (!options.required) return { blocks: [] };
    if (!(await findProjectRoot())) throw new CliError('E001');
    throw new CliError('E003', { file: CUSTOM_FILE });
  }
  const report = await validateFile(file, await shippedBlocks());
  if (report.errors.length) throw new CliError('E301', { details: report.errors.map((p) => `${CUSTOM_FILE} ${p.at}: ${p.message}`).join('; ') });
  return { file, blocks: BlockCatalogSchema.parse(await readJson(file)).blocks };
}

async function validateFile(file: string, shipped: BlockManifest[] | undefined): Promise<ValidationReport> {
  const value = await readJson(file);
  const { catalog, errors } = schemaProblems(value);
  if (!catalog) return { file, blocks: Array.isArray((value as { blocks?: unknown })?.blocks) ? (value as { blocks: unknown[] }).blocks.length : 0, errors, warnings: [] };
  const between = catalogProblems(catalog, shipped);
  return { file, blocks: catalog.blocks.length, ...between };
}

/**
 * Validates a block catalog file: `file`, else the project's svc.blocks.json (E003 when there is
 * none). A project's blocks are checked against the client's catalog too (their ids must differ;
 * they may require its blocks).
 */
export async function validateCatalog(file?: string): Promise<ValidationReport> {
  const target = file ? resolve(file) : await customFile();
  if (!target) throw new CliError('E003', { file: CUSTOM_FILE });
  return validateFile(target, target === CATALOG_FILE ? undefined : await shippedBlocks());
}

export interface BlockFilters {
  lane?: Lane;
  coupling?: Coupling;
  readiness?: Readiness;
  packageProfile?: PackageProfile;
  /** Only the project's own blocks (svc.blocks.json). */
  custom?: boolean;
}

export interface BlockGroup {
  key: string;
  blocks: Block[];
}

export interface BlockList {
  groupBy: GroupBy;
  filters: Omit<BlockFilters, 'custom'> & { custom: boolean };
  /** The project's svc.blocks.json when its blocks are listed. */
  customFile?: string;
  total: number;
  groups: BlockGroup[];
}

const ORDER: Record<GroupBy, readonly string[]> = {
  lane: ['foundation', 'product', 'addon', 'dev'],
  coupling: ['external-safe', 'external-with-adapter', 'internal-only'],
  readiness: ['public-ready', 'preview', 'internal', 'blocked'],
  profile: PACKAGE_PROFILES,
  package: [],
};

const keysOf = (block: Block, by: GroupBy): string[] =>
  by === 'profile' ? block.packageProfiles : [by === 'package' ? block.package : by === 'lane' ? block.lane : by === 'coupling' ? block.coupling : block.readiness];

/** Blocks in groups: in the order of the field's values (packages by name); a block in every profile it has, under `profile`. */
export function groupBlocks(blocks: Block[], by: GroupBy): BlockGroup[] {
  const groups = new Map<string, Block[]>();
  for (const block of blocks) for (const key of keysOf(block, by)) groups.set(key, [...(groups.get(key) ?? []), block]);
  const rank = (key: string) => (ORDER[by].includes(key) ? ORDER[by].indexOf(key) : ORDER[by].length);
  return [...groups.entries()].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([key, list]) => ({ key, blocks: list }));
}

/**
 * The blocks that match every filter given, grouped: the client's catalog and the project's own
 * blocks (svc.blocks.json, when the current folder is in a project that has one), or with
 * `custom` the project's only.
 */
export async function listBlocks(filters: BlockFilters, groupBy: GroupBy): Promise<BlockList> {
  const custom = await customBlocks({ required: filters.custom === true });
  const all: Block[] = [
    ...(filters.custom ? [] : (await shippedBlocks()).map((b): Block => ({ ...b, source: 'catalog' }))),
    ...custom.blocks.map((b): Block => ({ ...b, source: 'custom' })),
  ];
  const blocks = all.filter(
    (b) =>
      (!filters.lane || b.lane === filters.lane) &&
      (!filters.coupling || b.coupling === filters.coupling) &&
      (!filters.readiness || b.readiness === filters.readiness) &&
      (!filters.packageProfile || b.packageProfiles.includes(filters.packageProfile)),
  );
  const { custom: onlyCustom, ...rest } = filters;
  return {
    groupBy,
    filters: { ...rest, custom: onlyCustom === true },
    ...(custom.file ? { customFile: custom.file } : {}),
    total: blocks.length,
    groups: groupBlocks(blocks, groupBy),
  };
}

export type BlockDescription = Block & { requiredBy: string[] };

/** One block of the client's catalog or the project's, with the blocks that require it; E202 when there is none. */
export async function describeBlock(id: string): Promise<BlockDescription> {
  const all: Block[] = [...(await shippedBlocks()).map((b): Block => ({ ...b, source: 'catalog' })), ...(await customBlocks({ required: false })).blocks.map((b): Block => ({ ...b, source: 'custom' }))];
  const block = all.find((b) => b.id === id);
  if (!block) throw new CliError('E202', { resource: `Block ${id}` });
  return { ...block, requiredBy: all.filter((b) => b.requires?.includes(id)).map((b) => b.id) };
}

export interface ReadinessEntry {
  id: string;
  readiness: Readiness;
  source: Block['source'];
  reason: string;
}

export interface ReadinessReport {
  packageProfile: PackageProfile;
  /** Where the profile came from: the option, the project's manifest, or the default. */
  profileFrom: '--package-profile' | 'svc.project.json' | 'default';
  /** The blocks the profile may include, by readiness. */
  summary: Record<Readiness, number>;
  /** Public-ready: supported for every app. */
  available: string[];
  /** Usable with care: preview blocks (they may change), and internal ones outside the external profile. */
  cautions: ReadinessEntry[];
  /** Not usable in this profile: blocked blocks, and internal ones in the external profile. */
  unavailable: ReadinessEntry[];
  /**
   * The project's own blocks (svc.blocks.json), when it has any: it ships them, so it is ready
   * when none of them is unavailable in the profile or requires a block that is.
   */
  project?: { file: string; ready: boolean; blockers: ReadinessEntry[] };
}

function unavailableReason(block: Block, profile: PackageProfile): string | undefined {
  if (block.readiness === 'blocked') return block.blockedReason ?? 'blocked';
  if (block.readiness === 'internal' && profile === 'external') return "for the company's own apps only, not an external package";
  return undefined;
}

/**
 * Readiness of the blocks a package profile may include (the client's catalog and the project's
 * own): `profile`, else the project's (svc.project.json), else external, the default of svc init.
 */
export async function blocksReadiness(profile?: PackageProfile): Promise<ReadinessReport> {
  let packageProfile = profile;
  let profileFrom: ReadinessReport['profileFrom'] = '--package-profile';
  if (!packageProfile) {
    const root = await findProjectRoot();
    const manifest = root ? (await readManifest(root)).manifest : undefined;
    packageProfile = manifest?.packageProfile ?? 'external';
    profileFrom = manifest ? 'svc.project.json' : 'default';
  }
  const list = await listBlocks({ packageProfile }, 'readiness');
  const blocks = list.groups.flatMap((g) => g.blocks);
  const summary: Record<Readiness, number> = { 'public-ready': 0, preview: 0, internal: 0, blocked: 0 };
  const available: string[] = [];
  const cautions: ReadinessEntry[] = [];
  const unavailable: ReadinessEntry[] = [];
  for (const block of blocks) {
    summary[block.readiness]++;
    const entry = (reason: string): ReadinessEntry => ({ id: block.id, readiness: block.readiness, source: block.source, reason });
    const refused = unavailableReason(block, packageProfile);
    if (refused) unavailable.push(entry(refused));
    else if (block.readiness === 'preview') cautions.push(entry('works, but may change'));
    else if (block.readiness === 'internal') cautions.push(entry("for the company's own apps only"));
    else available.push(block.id);
  }
  const report: ReadinessReport = { packageProfile, profileFrom, summary, available, cautions, unavailable };
  if (list.customFile) {
    const all = new Map<string, Block>([...(await shippedBlocks()).map((b): [string, Block] => [b.id, { ...b, source: 'catalog' }])]);
    const custom = (await customBlocks({ required: true })).blocks.map((b): Block => ({ ...b, source: 'custom' }));
    for (const block of custom) all.set(block.id, block);
    const blockers: ReadinessEntry[] = [];
    for (const block of custom) {
      const entry = (reason: string): ReadinessEntry => ({ id: block.id, readiness: block.readiness, source: 'custom', reason });
      if (!block.packageProfiles.includes(packageProfile)) blockers.push(entry(`not in the ${packageProfile} profile (its profiles: ${block.packageProfiles.join(', ')})`));
      const refused = unavailableReason(block, packageProfile);
      if (refused) blockers.push(entry(refused));
      for (const required of block.requires ?? []) {
        const target = all.get(required);
        const reason = target && (unavailableReason(target, packageProfile) ?? (target.packageProfiles.includes(packageProfile) ? undefined : `not in the ${packageProfile} profile`));
        if (target && reason) blockers.push(entry(`requires ${required}: ${reason}`));
      }
    }
    report.project = { file: list.customFile, ready: blockers.length === 0, blockers };
  }
  return report;
}
