import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { installedBin, npm, npmEnv, packClient, runInstalled, type PackedClient } from './package.ts';

const VERSION: string = JSON.parse(readFileSync(new URL('../../cli/package.json', import.meta.url), 'utf8')).version;

/**
 * The client as a user installs it: `npm pack ./cli`, then `npm install -g` of the tarball into a
 * temporary prefix, with npm's registry set to an address nothing answers at (the package needs
 * nothing from a registry: its dependencies are compiled in).
 */
describe('svc installed with npm install -g', { timeout: 240_000 }, () => {
  let stack: TestStack;
  let dir: string;
  let packed: PackedClient;
  let bin: string;

  beforeAll(async () => {
    stack = await startTestStack();
    dir = await mkdtemp(join(tmpdir(), 'svc-install-'));
    const env = npmEnv(dir);
    packed = await packClient(join(dir, 'packed'), env);
    await npm(['install', '-g', packed.tarball, '--prefix', join(dir, 'prefix')], env, dir);
    bin = installedBin(join(dir, 'prefix'));
  });
  afterAll(async () => {
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('packs the compiled client only: no TypeScript source, no dependencies to fetch', () => {
    expect(packed).toMatchObject({ name: '@svc-platform/cli', version: VERSION });
    expect(packed.files).toContain('bin/svc.js');
    expect(packed.files).toContain('dist/svc.mjs');
    expect(packed.files).toContain('dist/THIRD-PARTY-LICENSES.txt');
    expect(packed.files).toContain('blocks/catalog.json');
    expect(packed.files).toContain('templates/app/server.mjs');
    // TypeScript only in the app template it scaffolds, none of its own.
    expect(packed.files.filter((f) => f.endsWith('.ts') && !f.startsWith('templates/'))).toEqual([]);
    const manifest = JSON.parse(readFileSync(new URL('../../cli/package.json', import.meta.url), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('runs as the svc command: the version, and a command against the platform', async () => {
    const version = await runInstalled(bin, ['--version'], { HOME: dir });
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toBe(VERSION);

    const env = { HOME: dir, BASE_URL_PUBLIC_API: stack.url, SVC_TOKEN: await stack.token(ADMIN) };
    const listed = await runInstalled(bin, ['tenant', 'list', '--format', 'json'], env);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.json.data).toContainEqual(expect.objectContaining({ slug: 'acme' }));
    const verified = await runInstalled(bin, ['verify', '--tenant-id', 'acme'], env);
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^✓ health: status ok$/m);
    // Files the client reads at run time ship with it.
    const block = await runInstalled(bin, ['blocks', 'describe', 'chat', '--format', 'json'], { HOME: dir });
    expect(block.exitCode, block.stderr).toBe(0);
    expect(block.json).toMatchObject({ id: 'chat', source: 'catalog' });
  });

  it('says how to build the client when a checkout has not built it', async () => {
    const checkout = join(dir, 'checkout');
    await mkdir(join(checkout, 'bin'), { recursive: true });
    await writeFile(join(checkout, 'bin/svc.js'), readFileSync(new URL('../../cli/bin/svc.js', import.meta.url)));
    const missing = await runInstalled(process.execPath, [join(checkout, 'bin/svc.js'), '--version'], { HOME: dir });
    expect(missing.exitCode).toBe(3);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(
      'svc: the compiled client (cli/dist/svc.mjs) is missing.\nIn a source checkout, build it with `npm run build:cli` (or run the source with `npx tsx cli/main.ts`).',
    );
  });

  it("loads a project's TypeScript object types with nothing but the installed package", async () => {
    const project = join(dir, 'project');
    await mkdir(join(project, 'src/svc.config'), { recursive: true });
    await writeFile(join(project, 'src/svc.config/fields.ts'), "export const title: { type: 'string' } = { type: 'string' };\n");
    await writeFile(
      join(project, 'src/svc.config/object-types.ts'),
      "import { title } from './fields';\ninterface Declared { name: string; schema: object }\nexport const objectTypes: Declared[] = [{ name: 'Note', schema: { type: 'object', properties: { title } } }];\n",
    );
    const valid = await runInstalled(bin, ['types', 'validate'], { HOME: dir }, project);
    expect(valid.exitCode, valid.stderr).toBe(0);
    expect(valid.stderr).toContain('1 object types in');
  });
});
