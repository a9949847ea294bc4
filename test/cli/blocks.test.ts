import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG as CAPABILITIES } from '../../control-plane/capabilities/catalog.ts';
import { ROUTE_CASES } from '../harness/routes.ts';
import { svc } from './svc.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CATALOG_FILE = join(REPO, 'cli/blocks/catalog.json');
const SCHEMA_FILE = join(REPO, 'cli/blocks/block-catalog.schema.json');
const catalog = JSON.parse(readFileSync(CATALOG_FILE, 'utf8')) as { blocks: any[] };
const ids = catalog.blocks.map((b) => b.id);

/** A project's own block, valid unless changed. */
const customBlock = (over: Record<string, unknown> = {}) => ({
  id: 'invoice-export',
  name: 'Invoice export',
  description: 'Exports invoices to the accounting system.',
  lane: 'product',
  coupling: 'external-safe',
  readiness: 'public-ready',
  package: '@acme/invoice-export',
  packageProfiles: ['external', 'hybrid'],
  provides: { objectTypes: ['invoice'] },
  requires: ['resources'],
  ...over,
});

describe('the block catalog that ships with the client', () => {
  it('describes blocks the platform has: its routes, capabilities, workflows, object types, packages and documents', () => {
    const served = new Set(Object.keys(ROUTE_CASES).map((route) => route.replace(/:\w+/g, '{}')));
    const capabilities = new Set(CAPABILITIES.map((c) => c.key));
    const workflows = new Set(readdirSync(join(REPO, 'workers/workflows')).filter((f) => f.endsWith('.workflow.ts')).map((f) => f.replace('.workflow.ts', '')));
    const migrations = readdirSync(join(REPO, 'control-plane/db/migrations')).map((f) => readFileSync(join(REPO, 'control-plane/db/migrations', f), 'utf8')).join('\n');
    for (const block of catalog.blocks) {
      for (const route of block.provides.routes ?? []) expect(served.has(route.replace(/\{\w+\}/g, '{}')), `${block.id}: ${route}`).toBe(true);
      for (const key of block.provides.capabilities ?? []) expect(capabilities.has(key), `${block.id}: capability ${key}`).toBe(true);
      for (const name of block.provides.workflows ?? []) expect(workflows.has(name), `${block.id}: workflow ${name}`).toBe(true);
      for (const type of block.provides.objectTypes ?? []) expect(migrations, `${block.id}: object type ${type}`).toContain(`'${type}'`);
      expect(existsSync(join(REPO, block.package)), `${block.id}: package ${block.package}`).toBe(true);
      if (block.docs) expect(existsSync(join(REPO, block.docs)), `${block.id}: docs ${block.docs}`).toBe(true);
    }
    for (const needed of ['tenancy', 'identity', 'resources', 'documents', 'chat', 'workflows', 'realtime', 'webhooks', 'geo', 'blob-storage']) expect(ids).toContain(needed);
  });

  it('is valid against the JSON Schema svc blocks schema prints, which is the schema file beside it', async () => {
    const printed = await svc(['blocks', 'schema']);
    expect(printed.exitCode).toBe(0);
    expect(printed.json).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: expect.arrayContaining(['catalogVersion', 'blocks']) });
    expect(printed.json, 'cli/blocks/block-catalog.schema.json is out of date: svc blocks schema > cli/blocks/block-catalog.schema.json').toEqual(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(printed.json);
    expect(validate(catalog), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ catalogVersion: 1, blocks: [customBlock({ lane: 'sideways' })] })).toBe(false);

    const outline = await svc(['blocks', 'schema', '--format', 'text']);
    expect(outline.stdout).toMatch(/^ {2}blocks\[\]\.lane {2}foundation \| product \| addon \| dev {2}required {2}foundation: /m);
    expect(outline.stdout).toMatch(/^ {2}blocks\[\]\.packageProfiles {2}\(external \| internal \| hybrid\)\[\] {2}required/m);
  });
});

/** `svc blocks` through the process, in and out of a project. */
describe('svc blocks', { timeout: 60_000 }, () => {
  let dir: string;
  let project: string;
  let outside: string;

  const manifest = (profile: string) => ({
    manifestVersion: 1,
    app: { name: 'Blocks App', key: 'blocks-app', id: null },
    packageProfile: profile,
    tenancy: { companyTenant: null, parentTenant: null, childTenant: null },
    template: { source: 'builtin:app', clientVersion: '0.0.0', agent: false, files: {} },
  });
  const writeCustom = (blocks: unknown[]) => writeFile(join(project, 'svc.blocks.json'), JSON.stringify({ catalogVersion: 1, blocks }, null, 2));
  const inProject = (args: string[]) => svc(args, { HOME: dir }, undefined, project);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-blocks-'));
    project = join(dir, 'app');
    outside = join(dir, 'elsewhere');
    await mkdir(project);
    await mkdir(outside);
    await writeFile(join(project, 'svc.project.json'), JSON.stringify(manifest('hybrid'), null, 2));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const out = (args: string[]) => svc(args, { HOME: dir }, undefined, outside);

  it('lists the catalog grouped by lane, with every filter and grouping', async () => {
    const all = await out(['blocks', 'list', '--format', 'json']);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.json).toMatchObject({ groupBy: 'lane', total: catalog.blocks.length, filters: { custom: false } });
    expect(all.json.groups.map((g: any) => g.key)).toEqual(['foundation', 'product', 'addon', 'dev']);
    expect(all.json.groups.flatMap((g: any) => g.blocks.map((b: any) => b.id)).sort()).toEqual([...ids].sort());
    expect(all.json.groups[0].blocks[0]).toEqual({ ...catalog.blocks.find((b) => b.lane === 'foundation'), source: 'catalog' });

    const listed = async (args: string[]) => (await out(['blocks', 'list', ...args, '--format', 'json'])).json.groups.flatMap((g: any) => g.blocks);
    const expectOnly = async (args: string[], keep: (b: any) => boolean) => {
      const blocks = await listed(args);
      expect(blocks.map((b: any) => b.id).sort(), args.join(' ')).toEqual(catalog.blocks.filter(keep).map((b) => b.id).sort());
      expect(blocks.length, args.join(' ')).toBeGreaterThan(0);
    };
    await expectOnly(['--lane', 'product'], (b) => b.lane === 'product');
    await expectOnly(['--coupling', 'internal-only'], (b) => b.coupling === 'internal-only');
    await expectOnly(['--readiness', 'preview'], (b) => b.readiness === 'preview');
    await expectOnly(['--package-profile', 'external'], (b) => b.packageProfiles.includes('external'));
    await expectOnly(['--lane', 'addon', '--coupling', 'external-with-adapter', '--readiness', 'preview', '--package-profile', 'hybrid'], (b) =>
      b.lane === 'addon' && b.coupling === 'external-with-adapter' && b.readiness === 'preview' && b.packageProfiles.includes('hybrid'));
    expect((await out(['blocks', 'list', '--lane', 'dev', '--readiness', 'blocked', '--format', 'json'])).json).toMatchObject({ total: 0, groups: [] });

    const keys = async (by: string) => (await out(['blocks', 'list', '--group-by', by, '--format', 'json'])).json.groups.map((g: any) => g.key);
    expect(await keys('coupling')).toEqual(['external-safe', 'external-with-adapter', 'internal-only']);
    expect(await keys('readiness')).toEqual(['public-ready', 'preview', 'internal', 'blocked']);
    expect(await keys('package')).toEqual([...new Set(catalog.blocks.map((b) => b.package))].sort());
    const byProfile = (await out(['blocks', 'list', '--group-by', 'profile', '--format', 'json'])).json;
    expect(byProfile.groups.map((g: any) => g.key)).toEqual(['external', 'internal', 'hybrid']);
    expect(byProfile.groups.find((g: any) => g.key === 'internal').blocks).toHaveLength(catalog.blocks.filter((b) => b.packageProfiles.includes('internal')).length);

    const text = await out(['blocks', 'list', '--lane', 'foundation']);
    expect(text.stdout).toMatch(/^foundation \(\d+\)\nID +LANE +COUPLING +READINESS +PROFILES\ntenancy +foundation +external-safe +public-ready +external, internal, hybrid$/m);
    const wrong = await out(['blocks', 'list', '--lane', 'sideways']);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain('Error E305: Invalid input: option \'--lane <lane>\' argument \'sideways\' is invalid. Allowed choices are foundation, product, addon, dev.');
    expect((await out(['blocks', 'list', '--group-by', 'colour'])).exitCode).toBe(2);
  });

  it("lists the project's own blocks with --custom, and with the catalog's otherwise", async () => {
    const outsideCustom = await out(['blocks', 'list', '--custom']);
    expect(outsideCustom.exitCode).toBe(3);
    expect(outsideCustom.stderr).toContain('Error E001: Not in an svc project');
    const noFile = await inProject(['blocks', 'list', '--custom']);
    expect(noFile.exitCode).toBe(3);
    expect(noFile.stderr).toContain('Error E003: Configuration file not found: svc.blocks.json');

    await writeCustom([customBlock()]);
    const only = await inProject(['blocks', 'list', '--custom', '--format', 'json']);
    expect(only.exitCode, only.stderr).toBe(0);
    expect(only.json).toMatchObject({ total: 1, filters: { custom: true }, customFile: join(project, 'svc.blocks.json'), groups: [{ key: 'product', blocks: [{ ...customBlock(), source: 'custom' }] }] });
    const both = await inProject(['blocks', 'list', '--format', 'json']);
    expect(both.json.total).toBe(catalog.blocks.length + 1);
    expect((await inProject(['blocks', 'list', '--lane', 'product'])).stdout).toMatch(/^invoice-export \(custom\) +product +external-safe/m);
    const described = await inProject(['blocks', 'describe', 'invoice-export', '--format', 'json']);
    expect(described.json).toEqual({ ...customBlock(), source: 'custom', requiredBy: [] });
    const resources = await inProject(['blocks', 'describe', 'resources', '--format', 'json']);
    expect(resources.json.requiredBy).toContain('invoice-export');

    await writeCustom([customBlock({ lane: 'sideways' })]);
    const invalid = await inProject(['blocks', 'list', '--custom']);
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toContain('Error E301: Invalid schema: svc.blocks.json blocks[0] (invoice-export).lane: Invalid option');
    await rm(join(project, 'svc.blocks.json'));
  });

  it('describes a block: what it provides, requires and what requires it', async () => {
    const search = await out(['blocks', 'describe', 'search', '--format', 'json']);
    expect(search.exitCode).toBe(0);
    expect(search.json).toEqual({ ...catalog.blocks.find((b) => b.id === 'search'), source: 'catalog', requiredBy: expect.arrayContaining(['chat', 'documents']) });
    const legacy = await out(['blocks', 'describe', 'search', '--json']);
    expect(legacy.json).toEqual(search.json);
    expect(legacy.stderr).toBe('Warning: --json is deprecated; use --format json\n');
    const text = await out(['blocks', 'describe', 'chat']);
    expect(text.stdout).toMatch(/^readiness +preview$/m);
    expect(text.stdout).toMatch(/^requires +search, workflows$/m);
    expect(text.stdout).toContain('\nroutes\n  POST /v4/ai/chat/{tenantId}/{workflowId}/{stage}\n');
    const missing = await out(['blocks', 'describe', 'no-such-block', '--format', 'json']);
    expect(missing.exitCode).toBe(5);
    expect(missing.json.error).toMatchObject({ code: 'E202', message: 'Block no-such-block not found' });
    expect((await out(['blocks', 'describe'])).stderr).toContain('Error E303: Required field missing: <block-id>');
  });

  it("reports readiness per package profile, and whether the project's own blocks can ship in it", async () => {
    const external = await out(['blocks', 'readiness', '--format', 'json']);
    expect(external.exitCode, external.stderr).toBe(0);
    expect(external.json).toMatchObject({ packageProfile: 'external', profileFrom: 'default' });
    expect(external.json.unavailable).toContainEqual(expect.objectContaining({ id: 'blob-storage-s3', readiness: 'blocked' }));
    expect(external.json.cautions).toContainEqual({ id: 'chat', readiness: 'preview', source: 'catalog', reason: 'works, but may change' });
    expect(external.json.available).toContain('resources');
    expect(external.json.available).not.toContain('storage');
    expect(external.json.project).toBeUndefined();

    const internal = await out(['blocks', 'readiness', '--package-profile', 'internal', '--format', 'json']);
    expect(internal.json).toMatchObject({ packageProfile: 'internal', profileFrom: '--package-profile' });
    expect(internal.json.cautions).toContainEqual(expect.objectContaining({ id: 'dev-identity-provider', readiness: 'internal' }));
    expect(internal.json.available).toContain('storage');

    const projects = await inProject(['blocks', 'readiness', '--format', 'json']);
    expect(projects.json).toMatchObject({ packageProfile: 'hybrid', profileFrom: 'svc.project.json' });

    await writeCustom([customBlock(), customBlock({ id: 'archive', name: 'Archive', requires: ['blob-storage-s3'], packageProfiles: ['internal'] })]);
    const blocked = await inProject(['blocks', 'readiness']);
    expect(blocked.exitCode).toBe(9);
    expect(blocked.stdout).toContain('\n  archive (custom) (public-ready): not in the hybrid profile (its profiles: internal)\n');
    expect(blocked.stdout).toContain('\n  archive (custom) (public-ready): requires blob-storage-s3: The blob store has only its local-directory implementation');
    expect(blocked.stdout).toMatch(/Not ready: 2 blocker\(s\)\.\n$/);
    await writeCustom([customBlock()]);
    const ready = await inProject(['blocks', 'readiness', '--package-profile', 'external', '--format', 'json']);
    expect(ready.exitCode).toBe(0);
    expect(ready.json.project).toEqual({ file: join(project, 'svc.blocks.json'), ready: true, blockers: [] });
    await rm(join(project, 'svc.blocks.json'));
  });

  it('validates a catalog file: schema errors and errors between blocks fail, warnings fail only with --strict', async () => {
    const shipped = await out(['blocks', 'validate', '--file', CATALOG_FILE, '--strict', '--format', 'json']);
    expect(shipped.exitCode, shipped.stdout + shipped.stderr).toBe(0);
    expect(shipped.json).toEqual({ file: CATALOG_FILE, blocks: catalog.blocks.length, errors: [], warnings: [] });

    const none = await out(['blocks', 'validate']);
    expect(none.exitCode).toBe(3);
    expect(none.stderr).toContain('Error E003: Configuration file not found: svc.blocks.json');

    await writeCustom([customBlock()]);
    const valid = await inProject(['blocks', 'validate']);
    expect(valid.exitCode, valid.stderr).toBe(0);
    expect(valid.stdout).toBe(`✓ ${join(project, 'svc.blocks.json')}: 1 block(s) valid\n`);

    await writeCustom([
      customBlock(),
      customBlock({ name: 'Twice' }),
      customBlock({ id: 'resources' }),
      customBlock({ id: 'orphan', requires: ['no-such-block'] }),
      customBlock({ id: 'Bad Id', readiness: 'someday' }),
    ]);
    const broken = await inProject(['blocks', 'validate', '--format', 'json']);
    expect(broken.exitCode).toBe(2);
    expect(broken.json.error.code).toBe('E301');
    expect(broken.json.error.message).toContain('blocks[4] (Bad Id).id: must be kebab-case');
    expect(broken.json.error.message).toContain('blocks[4] (Bad Id).readiness: Invalid option');
    await writeCustom([customBlock(), customBlock({ name: 'Twice' }), customBlock({ id: 'resources' }), customBlock({ id: 'orphan', requires: ['no-such-block'] })]);
    const between = await inProject(['blocks', 'validate']);
    expect(between.exitCode).toBe(2);
    expect(between.stderr).toContain('error: blocks[1] (invoice-export).id: invoice-export is also the id of blocks[0]\n');
    expect(between.stderr).toContain("error: blocks[2] (resources).id: resources is the id of a block of the client's catalog: choose another\n");
    expect(between.stderr).toContain("error: blocks[3] (orphan).requires: no block no-such-block in this file or the client's catalog\n");
    expect(between.stderr).toContain('Error E301: Invalid schema: ');

    const warned = [
      customBlock({ id: 'inside', coupling: 'internal-only' }),
      customBlock({ id: 'adapted', coupling: 'external-with-adapter' }),
      customBlock({ id: 'stuck', readiness: 'blocked' }),
      customBlock({ id: 'eager', requires: ['chat'] }),
      customBlock({ id: 'empty', provides: {} }),
    ];
    await writeCustom(warned);
    const lenient = await inProject(['blocks', 'validate']);
    expect(lenient.exitCode, lenient.stderr).toBe(0);
    expect(lenient.stdout).toBe(`✓ ${join(project, 'svc.blocks.json')}: 5 block(s) valid, 5 warning(s)\n`);
    expect(lenient.stderr).toContain('warning: blocks[0] (inside).packageProfiles: internal-only, but offered to the external profile\n');
    expect(lenient.stderr).toContain('warning: blocks[1] (adapted).adapter: external-with-adapter, but names no adapter\n');
    expect(lenient.stderr).toContain('warning: blocks[2] (stuck).blockedReason: blocked, but says not why\n');
    expect(lenient.stderr).toContain('warning: blocks[3] (eager).requires: public-ready, but requires chat, which is preview\n');
    expect(lenient.stderr).toContain('warning: blocks[4] (empty).provides: provides nothing\n');
    const strict = await inProject(['blocks', 'validate', '--strict', '--format', 'json']);
    expect(strict.exitCode).toBe(2);
    expect(strict.json.error).toMatchObject({ code: 'E302', message: expect.stringMatching(/^Validation failed: .+svc\.blocks\.json: 5 warning\(s\) with --strict: blocks\[0\] \(inside\)/) });

    const elsewhere = join(dir, 'other.json');
    await writeFile(elsewhere, '{ not json');
    const notJson = await out(['blocks', 'validate', '--file', elsewhere]);
    expect(notJson.exitCode).toBe(2);
    expect(notJson.stderr).toContain(`Error E301: Invalid schema: ${elsewhere} is not JSON`);
    expect((await out(['blocks', 'validate', '--file', join(dir, 'missing.json')])).stderr).toContain(`Error E003: Configuration file not found: ${join(dir, 'missing.json')}`);
    await rm(join(project, 'svc.blocks.json'));
  });
});
