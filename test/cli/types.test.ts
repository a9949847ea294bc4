import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { svc } from './svc.ts';

/** `svc types` in a project directory against the running platform. */
describe('svc types', { timeout: 90_000 }, () => {
  let stack: TestStack;
  let project: string;
  let env: Record<string, string>;
  const name = `Widget${randomBytes(3).toString('hex')}`;
  const key = name.replace(/^Widget/, 'widget');

  const declare = (types: unknown[]) =>
    writeFile(join(project, 'src/svc.config/object-types.ts'), `export const objectTypes = ${JSON.stringify(types, null, 2)};\n`);
  const inProject = (args: string[]) => svc(args, env, undefined, project);

  beforeAll(async () => {
    stack = await startTestStack();
    project = await mkdtemp(join(tmpdir(), 'svc-project-'));
    await mkdir(join(project, 'src/svc.config'), { recursive: true });
    env = { HOME: project, SVC_TOKEN: await stack.token(ADMIN), BASE_URL_PUBLIC_API: stack.url, SVC_TENANT_ID: 'acme' };
  });
  afterAll(async () => {
    await stack?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('refuses a missing or invalid object-types file', async () => {
    const missing = await inProject(['types', 'validate']);
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toContain('Error E004: Object Types file not found or invalid');
    await declare([{ name: 'lower', schema: { type: 'string' } }]);
    const invalid = await inProject(['types', 'validate']);
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toContain('Error E301: Invalid schema: objectTypes[0] (lower).name: must be PascalCase');
  });

  it('seeds the types to the tenant, converges, reports nothing left, and pulls them as TypeScript', async () => {
    const schema = { type: 'object', required: ['title'], properties: { title: { type: 'string', maxLength: 100 }, weight: { type: 'number' } } };
    await declare([{ name, schema }]);
    expect((await inProject(['types', 'validate'])).exitCode).toBe(0);

    const dry = await inProject(['types', 'seed', '--dry-run', '--tenant-key', 'acme', '--format', 'json']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.json).toMatchObject({ env: 'dev', dryRun: true, converged: false, changes: [{ action: 'create', key, name }] });
    const seeded = await inProject(['types', 'seed', '--tenant-key', 'acme', '--format', 'json']);
    expect(seeded.json).toMatchObject({ dryRun: false, converged: true, changes: [{ action: 'create', key }] });
    const again = await inProject(['types', 'diff', '--tenant-key', 'acme']);
    expect(again.stdout).toMatch(new RegExp(`^unchanged\\s+${key}\\s+${name}\\s+-$`, 'm'));

    await declare([{ name, schema, indexes: ['weight'] }]);
    const updated = await inProject(['types', 'seed', '--format', 'json']);
    expect(updated.json.changes).toEqual([expect.objectContaining({ action: 'update', key, fields: ['indexes'] })]);
    const listed = await stack.request('GET', '/v4/data/resources/object-types?tenant_id=acme', { as: ADMIN });
    expect(listed.body.data.find((t: any) => t.key === key)).toMatchObject({ indexes: ['weight'], version: 2 });

    const acmeId: string = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    const staged = await inProject(['types', 'seed', '--env', 'staging', '--tenant-id', acmeId, '--format', 'json']);
    expect(staged.exitCode, staged.stderr).toBe(0);
    expect(staged.json).toMatchObject({ env: 'staging', dryRun: false, converged: true });
    expect(staged.json.changes.filter((c: any) => c.action !== 'unchanged')).toEqual([]);
    const byId = await inProject(['types', 'diff', '--tenant-id', acmeId]);
    expect(byId.exitCode, byId.stderr).toBe(0);
    expect(byId.stdout).toMatch(new RegExp(`^unchanged\\s+${key}\\s+${name}\\s+-$`, 'm'));

    const elsewhere = await inProject(['types', 'pull', '--tenant-id', 'acme', '--output', 'types/acme.ts']);
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect(await readFile(join(project, 'types/acme.ts'), 'utf8')).toContain(`export interface ${name}Data {`);

    const pulled = await inProject(['types', 'pull', '--tenant-id', 'acme']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    const generated = await readFile(join(project, 'src/svc.config/object-types.generated.ts'), 'utf8');
    expect(generated).toContain(`export interface ${name}Data {\n  "title": string;\n  "weight"?: number;\n}`);
    expect(generated).toContain('export interface ProjectData {');
  });
});
