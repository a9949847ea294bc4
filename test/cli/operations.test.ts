import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';
import { normalise, svc } from './svc.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/** `svc` batches, files, storage, provisioning, tenants, users and verify against the running platform. */
describe('svc batches, files, storage, tenants, users and verify', { timeout: 120_000 }, () => {
  let stack: TestStack;
  let home: string;
  let env: Record<string, string>;
  let acme: string;
  const run = randomBytes(3).toString('hex');

  beforeAll(async () => {
    stack = await startTestStack();
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
    env = { HOME: home, SVC_TOKEN: await stack.token(ADMIN), BASE_URL_PUBLIC_API: stack.url };
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('creates, updates and deletes resources in batches, all or none', async () => {
    const items = [{ name: `Batch A ${run}` }, { name: `Batch B ${run}` }];
    const created = await svc(['resources', 'batch-create', 'project', '--tenant-id', acme, '--data', JSON.stringify(items), '--format', 'json'], env);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json.data.map((r: any) => [r.data.name, r.version])).toEqual([[`Batch A ${run}`, 1], [`Batch B ${run}`, 1]]);
    const ids: string[] = created.json.data.map((r: any) => r.id);

    const file = join(home, 'updates.json');
    await writeFile(file, JSON.stringify({ items: ids.map((id, i) => ({ id, version: 1, data: { name: `Batch ${i} ${run}`, status: 'done' } })) }));
    const updated = await svc(['resources', 'batch-update', 'project', '--tenant-id', acme, '--file', file, '--format', 'json'], env);
    expect(updated.exitCode, updated.stderr).toBe(0);
    expect(updated.json.data.map((r: any) => r.version)).toEqual([2, 2]);
    // A stale version in one item refuses the whole batch: E205, nothing changed.
    const stale = await svc(['resources', 'batch-update', 'project', '--tenant-id', acme, '--file', file, '--format', 'json'], env);
    expect(stale.exitCode).toBe(7);
    expect(stale.json.error.code).toBe('E205');
    expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${ids[0]}`, { as: ADMIN })).body.version).toBe(2);

    const unasked = await svc(['resources', 'batch-delete', 'project', '--tenant-id', acme, '--ids', ids.join(',')], env);
    expect(unasked.exitCode).toBe(2);
    expect(unasked.stderr).toContain('pass --force');
    const refusedIds = await svc(['resources', 'batch-create', 'project', '--tenant-id', acme, '--ids', ids.join(','), '--format', 'json'], env);
    expect(refusedIds.json.error).toMatchObject({ code: 'E305' });
    const deleted = await svc(['resources', 'batch-delete', 'project', '--tenant-id', acme, '--ids', ids.join(','), '--force'], env);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe('Deleted 2 resource(s)\n');
    for (const id of ids) expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN })).status).toBe(404);
  });

  it('takes the items of every batch command from --data or --file', async () => {
    const file = join(home, `batch-${run}.json`);
    await writeFile(file, JSON.stringify([{ name: `File A ${run}` }, { name: `File B ${run}` }]));
    const created = await svc(['resources', 'batch-create', 'project', '--tenant-id', acme, '--file', file, '--format', 'json'], env);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json.data.map((r: any) => r.data.name)).toEqual([`File A ${run}`, `File B ${run}`]);
    const [a, b] = created.json.data as Array<{ id: string }>;
    const updated = await svc(['resources', 'batch-update', 'project', '--tenant-id', acme, '--data', JSON.stringify([{ id: a!.id, version: 1, data: { name: `Data A ${run}` } }]), '--format', 'json'], env);
    expect(updated.exitCode, updated.stderr).toBe(0);
    expect(updated.json.data.map((r: any) => [r.id, r.version, r.data.name])).toEqual([[a!.id, 2, `Data A ${run}`]]);
    const byData = await svc(['resources', 'batch-delete', 'project', '--tenant-id', acme, '--data', JSON.stringify([a!.id]), '--force', '--format', 'json'], env);
    expect(byData.exitCode, byData.stderr).toBe(0);
    expect(byData.json).toEqual({ deleted: 1 });
    await writeFile(file, JSON.stringify({ items: [b!.id] }));
    const byFile = await svc(['resources', 'batch-delete', 'project', '--tenant-id', acme, '--file', file, '--force', '--format', 'json'], env);
    expect(byFile.exitCode, byFile.stderr).toBe(0);
    expect(byFile.json).toEqual({ deleted: 1 });
    for (const { id } of [a!, b!]) expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN })).status).toBe(404);
  });

  it('uploads a file into a file property, downloads it, and deletes it', async () => {
    const type = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${acme}`, {
      as: ADMIN,
      body: { name: `Memo${run}`, schema: { type: 'object', properties: { title: { type: 'string' } } }, fileProperties: { notes: { maxSize: 4096, contentTypes: ['text/plain'] } } },
    });
    expect(type.status, JSON.stringify(type.body)).toBe(201);
    const memo = (await stack.request('POST', `/v4/data/resources/${acme}/${type.body.key}`, { as: ADMIN, body: { data: { title: 'memo' } } })).body;
    const source = join(home, 'notes.txt');
    const text = `Minutes of ${run}\n`.repeat(20);
    await writeFile(source, text);

    const uploaded = await svc(['resources', 'file', 'upload', type.body.key, memo.id, 'notes', source, '--tenant-id', acme, '--content-type', 'text/plain', '--format', 'json'], env);
    expect(uploaded.exitCode, uploaded.stdout + uploaded.stderr).toBe(0);
    expect(uploaded.json).toMatchObject({ id: memo.id, version: 2, data: { notes: { filename: 'notes.txt', size: text.length, contentType: 'text/plain' } } });

    const target = join(home, 'copy.txt');
    const got = await svc(['resources', 'file', 'get', type.body.key, memo.id, 'notes', '--tenant-id', acme, '--output', target, '--format', 'json'], env);
    expect(got.exitCode, got.stderr).toBe(0);
    expect(got.json).toEqual({ path: target, filename: 'notes.txt', contentType: expect.stringContaining('text/plain'), size: text.length });
    expect(await readFile(target, 'utf8')).toBe(text);
    const piped = await svc(['resources', 'file', 'get', type.body.key, memo.id, 'notes', '--tenant-id', acme], env);
    expect(piped.stdout).toBe(text);

    const tooBig = join(home, 'big.txt');
    await writeFile(tooBig, 'x'.repeat(5000));
    const refused = await svc(['resources', 'file', 'upload', type.body.key, memo.id, 'notes', tooBig, '--tenant-id', acme, '--content-type', 'text/plain', '--format', 'json'], env);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.json.error.code).toMatch(/^E(203|302|305)$/);
    const missing = await svc(['resources', 'file', 'upload', type.body.key, memo.id, 'notes', join(home, 'nope.txt'), '--tenant-id', acme, '--format', 'json'], env);
    expect(missing.json.error).toMatchObject({ code: 'E305', exitCode: 2 });

    const removed = await svc(['resources', 'file', 'delete', type.body.key, memo.id, 'notes', '--tenant-id', acme, '--force', '--format', 'json'], env);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.json).toEqual({ id: memo.id, type: type.body.key, property: 'notes', deleted: true });
    const gone = await svc(['resources', 'file', 'get', type.body.key, memo.id, 'notes', '--tenant-id', acme, '--output', target, '--format', 'json'], env);
    expect(gone.json.error).toMatchObject({ code: 'E202', exitCode: 5 });
  });

  it('reports storage status and the doctor, syncs the schema and provisions storage as dry runs', async () => {
    const status = await svc(['resources', 'storage', 'status', '--tenant-id', acme, '--format', 'json'], env);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.json).toEqual((await stack.request('GET', `/v4/data/resources/${acme}/storage`, { as: ADMIN })).body);

    for (const path of [['resources', 'storage', 'doctor'], ['resources', 'doctor']]) {
      const doctor = await svc([...path, '--tenant-id', acme, '--format', 'json'], env);
      expect(doctor.json).toMatchObject({ tenantId: acme, result: expect.stringMatching(/^(ok|warn|fail)$/), checks: expect.any(Array) });
      expect(doctor.exitCode).toBe(doctor.json.result === 'fail' ? 9 : 0);
    }
    const doctorText = await svc(['resources', 'doctor', '--tenant-id', acme, '--simple'], env);
    expect(doctorText.stdout).toMatch(/^BACKEND: postgresql\nCHECK: row-level-security\nRESULT: ok\n/m);

    const sync = await svc(['resources', 'sync-schema', '--tenant-id', acme, '--backend', 'postgresql', '--dry-run', '--format', 'json'], env);
    expect(sync.exitCode, sync.stderr).toBe(0);
    expect(sync.json).toMatchObject({ tenantId: acme, backend: 'postgresql', dryRun: true, changes: expect.any(Array) });
    const badBackend = await svc(['resources', 'sync-schema', '--tenant-id', acme, '--backend', 'oracle'], env);
    expect(badBackend.exitCode).toBe(2);

    const provision = await svc(['provision', 'storage', '--tenant-id', acme, '--backend', 'blob', '--dry-run', '--format', 'json'], env);
    expect(provision.exitCode, provision.stderr).toBe(0);
    expect(provision.json).toMatchObject({ backend: 'blob', dryRun: true });
    const provisionText = await svc(['provision', 'storage', '--tenant-id', acme, '--backend', 'blob', '--dry-run'], env);
    expect(provisionText.stdout).toMatch(/^blob: would make \d+ change\(s\)/);
    // The seed's defaults and names: every backend unless --backend says one; mongodb is documentdb.
    const everything = await svc(['provision', 'storage', '--tenant-id', acme, '--dry-run', '--format', 'json'], env);
    expect(everything.exitCode, everything.stderr).toBe(0);
    expect(everything.json).toMatchObject({ backend: 'all', dryRun: true });
    const mongo = await svc(['provision', 'storage', '--tenant-id', acme, '--backend', 'mongodb', '--dry-run', '--format', 'json'], env);
    expect(mongo.exitCode, mongo.stderr).toBe(0);
    expect(mongo.json).toMatchObject({ backend: 'documentdb', dryRun: true });

    // --rebuild-search asks for the whole search projection to be rebuilt: the plan says so.
    const rebuild = await svc(['provision', 'storage', '--tenant-id', acme, '--backend', 'search', '--dry-run', '--rebuild-search', '--format', 'json'], env);
    expect(rebuild.exitCode, rebuild.stderr).toBe(0);
    expect(rebuild.json).toMatchObject({ backend: 'search', dryRun: true, rebuildSearch: true });
    expect(rebuild.json.changes.map((c: any) => c.action)).toContain('rebuild');
    const noRebuild = await svc(['provision', 'storage', '--tenant-id', acme, '--backend', 'search', '--dry-run', '--format', 'json'], env);
    expect(noRebuild.json).toMatchObject({ rebuildSearch: false });
    expect(noRebuild.json.changes.map((c: any) => c.action)).not.toContain('rebuild');

    const verified = await svc(['verify', 'storage', '--tenant-id', acme, '--format', 'json'], env);
    expect(verified.json.summary).toMatchObject({ total: 2, failed: verified.json.checks[1].ok ? 0 : 1 });
    expect(verified.exitCode).toBe(verified.json.summary.failed ? 9 : 0);
    const outsider = await svc(['verify', 'storage', '--tenant-id', acme, '--format', 'json'], { ...env, SVC_TOKEN: await stack.token(MEMBER) });
    expect(outsider.json.summary.failed).toBeGreaterThan(0);
    expect(outsider.json.checks.find((c: any) => c.name === 'storage doctor').error.code).toBe('E204');
    expect(outsider.exitCode).toBe(9);
  });

  it('verifies the calls an application makes, skipping what it was not given, and fails on a missing resource', async () => {
    const project = (await stack.request('POST', `/v4/data/resources/${acme}/project`, { as: ADMIN, body: { data: { name: `Verify ${run}` } } })).body;
    const ok = await svc(['verify', 'calls', '--tenant-id', acme, '--resource-type', 'project', '--resource-id', project.id, '--user-email', MEMBER, '--format', 'json'], env);
    expect(ok.exitCode, ok.stdout + ok.stderr).toBe(0);
    expect(ok.json.summary).toEqual({ total: 9, passed: 8, failed: 0, skipped: 1 });
    expect(ok.json.checks.map((c: any) => [c.name, c.ok, c.skipped ?? false])).toEqual([
      ['health', true, false],
      ['object types', true, false],
      ['schema', true, false],
      ['resource list', true, false],
      ['resource query', true, false],
      ['resource get', true, false],
      ['user by e-mail', true, false],
      ['memberships', true, false],
      ['chat', true, true],
    ]);
    const text = await svc(['verify', 'calls', '--tenant-id', acme, '--resource-type', 'project', '--resource-id', project.id, '--simple'], env);
    expect(normalise(text.stdout)).toContain(`ok resource get: project <uuid> at version 1\n`);
    expect(text.stdout).toMatch(/skipped user by e-mail: no --user-email\n/);

    const missing = await svc(['verify', 'calls', '--tenant-id', acme, '--resource-type', 'project', '--resource-id', '00000000-0000-4000-8000-000000000000', '--format', 'json'], env);
    expect(missing.exitCode).toBe(9);
    expect(missing.json.summary.failed).toBe(1);
    expect(missing.json.checks.find((c: any) => c.name === 'resource get').error.code).toBe('E202');
    const recorded = await svc(['verify', 'calls', '--tenant-id', acme, '--resource-type', 'project', '--resource-id', project.id, '--user-email', MEMBER, '--tenant-record', 'acme', '--format', 'json'], env);
    expect(recorded.exitCode, recorded.stdout + recorded.stderr).toBe(0);
    expect(recorded.json.checks.find((c: any) => c.name === 'memberships')).toMatchObject({ ok: true, detail: expect.stringMatching(/^member of acme/) });
    const notMember = await svc(['verify', 'calls', '--tenant-id', acme, '--resource-type', 'project', '--resource-id', project.id, '--user-email', MEMBER, '--tenant-record', `nowhere-${run}`, '--format', 'json'], env);
    expect(notMember.exitCode).toBe(9);
    expect(notMember.json.checks.find((c: any) => c.name === 'memberships').error.code).toBe('E202');
    const chatWithout = await svc(['verify', 'calls', '--tenant-id', acme, '--include-chat', '--format', 'json'], env);
    expect(chatWithout.json.error).toMatchObject({ code: 'E305' });
  });

  it('creates a child tenant, waits until it is usable and selects it, invites, removes a user and an invitation declined, and deletes it', async () => {
    const slug = `cli-${run}`;
    const created = await svc(['tenant', 'create', '--name', `CLI ${run}`, '--slug', slug, '--parent', 'acme', '--domain', 'acme.test', '--format', 'json'], env);
    expect(created.exitCode, created.stdout + created.stderr).toBe(0);
    expect(created.json).toMatchObject({ slug, status: 'active', roles: expect.arrayContaining(['tenant-admin']) });
    const childId: string = created.json.id;
    const parent = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.id === acme);
    expect(created.json.homeRegion).toBe(parent.homeRegion);
    expect(JSON.parse(await readFile(join(home, '.svc', 'context.json'), 'utf8')).default).toEqual({ tenantId: childId, tenantSlug: slug });

    const invited = await svc(['user', 'invite', '--email', MEMBER, '--format', 'json'], env);
    expect(invited.exitCode, invited.stdout + invited.stderr).toBe(0);
    expect(invited.json).toMatchObject({ tenantId: childId, roles: expect.any(Array) });
    const unknown = await svc(['user', 'invite', '--email', `nobody-${run}@example.test`, '--format', 'json'], env);
    expect(unknown.json.error).toMatchObject({ code: 'E202' });
    const me = await svc(['user', 'provision-me', '--tenant', childId, '--format', 'json'], { ...env, SVC_TOKEN: await stack.token(MEMBER) });
    expect(me.exitCode, me.stdout + me.stderr).toBe(0);

    // The member is removed, invited again, and declines; a second decline finds no invitation.
    const memberId: string = invited.json.userId ?? (await stack.request('GET', `/v4/platform/users/by-email?email=${encodeURIComponent(MEMBER)}`, { as: ADMIN })).body.id;
    const memberOf = async () => (await stack.request('GET', `/v4/platform/users/${memberId}/memberships`, { as: ADMIN })).body;
    expect(JSON.stringify(await memberOf())).toContain(childId);
    const removed = await svc(['user', 'remove', '--email', MEMBER, '--tenant', childId, '--force', '--format', 'json'], env);
    expect(removed.exitCode, removed.stdout + removed.stderr).toBe(0);
    expect(removed.json).toEqual({ tenantId: childId, userId: memberId, email: MEMBER, removed: true });
    expect(JSON.stringify(await memberOf())).not.toContain(childId);
    const removedAgain = await svc(['user', 'remove', '--email', MEMBER, '--tenant', childId, '--force', '--format', 'json'], env);
    expect(removedAgain.json.error).toMatchObject({ code: 'E202' });
    expect((await svc(['user', 'invite', '--email', MEMBER, '--tenant', childId], env)).exitCode).toBe(0);
    const memberEnv = { ...env, SVC_TOKEN: await stack.token(MEMBER) };
    const declined = await svc(['user', 'decline', '--tenant', childId], memberEnv);
    expect(declined.exitCode, declined.stdout + declined.stderr).toBe(0);
    expect(declined.stdout).toBe(`Declined the invitation to ${childId}\n`);
    expect(JSON.stringify(await memberOf())).not.toContain(childId);
    const declinedAgain = await svc(['user', 'decline', '--tenant', childId, '--format', 'json'], memberEnv);
    expect(declinedAgain.json.error).toMatchObject({ code: 'E202' });

    const badSlug = await svc(['tenant', 'create', '--name', 'Bad', '--slug', 'Not Kebab', '--parent', 'acme'], env);
    expect(badSlug.exitCode).toBe(2);
    const rootWithoutRegion = await svc(['tenant', 'create', '--name', 'Root', '--slug', `root-${run}`, '--allow-root', '--format', 'json'], env);
    expect(rootWithoutRegion.json.error).toMatchObject({ code: 'E305', message: expect.stringContaining('--home-region') });
    const rootByTenantAdmin = await svc(['tenant', 'create', '--name', 'Root', '--slug', `root-${run}`, '--allow-root', '--home-region', 'eu', '--format', 'json'], env);
    expect(rootByTenantAdmin.json.error).toMatchObject({ code: 'E204' });

    expect((await svc(['tenant', 'delete', childId], env)).exitCode).toBe(2);
    const deleted = await svc(['tenant', 'delete', childId, '--force', '--format', 'json'], env);
    expect(deleted.exitCode, deleted.stdout + deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ id: childId, deleted: true });
    expect(JSON.parse(await readFile(join(home, '.svc', 'context.json'), 'utf8')).default).toBeUndefined();
  });

  it('creates a root tenant as a platform administrator, in the home region given', async () => {
    const slug = `cli-root-${run}`;
    const rootEnv = { ...env, SVC_TOKEN: await stack.token(PLATFORM_ADMIN) };
    const created = await svc(['tenant', 'create', '--name', `Root ${run}`, '--slug', slug, '--allow-root', '--home-region', 'ca', '--format', 'json'], rootEnv);
    expect(created.exitCode, created.stdout + created.stderr).toBe(0);
    expect(created.json).toMatchObject({ slug, status: 'active', parentId: null, homeRegion: 'ca' });

    const described = await svc(
      ['tenant', 'create', '--name', `Grocer ${run}`, '--slug', `${slug}-grocer`, '--allow-root', '--home-region', 'eu', '--usecase', 'retail', '--industry', 'Groceries', '--starter-template', 'retail-starter', '--format', 'json'],
      rootEnv,
    );
    expect(described.exitCode, described.stdout + described.stderr).toBe(0);
    const badUsecase = await svc(['tenant', 'create', '--name', 'Bad', '--slug', `${slug}-bad`, '--allow-root', '--home-region', 'eu', '--usecase', 'education', '--format', 'json'], rootEnv);
    expect(badUsecase.json.error).toMatchObject({ code: 'E305', message: expect.stringContaining('--usecase') });
    // What the platform stored: the options given, else the seed's defaults (generic, blank-vertical-template).
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ slug: string; usecase: string; industry: string | null; starter_template: string }[]>`
        select slug, usecase, industry, starter_template from tenants where slug in (${slug}, ${`${slug}-grocer`}, ${`${slug}-bad`}) order by slug`;
      expect(rows).toEqual([
        { slug, usecase: 'generic', industry: null, starter_template: 'blank-vertical-template' },
        { slug: `${slug}-grocer`, usecase: 'retail', industry: 'Groceries', starter_template: 'retail-starter' },
      ]);
    } finally {
      await sql.end();
    }
  });
});
