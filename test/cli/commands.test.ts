import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';
import { svc } from './svc.ts';

/** `svc tenant`, `publicapi`, `verify`, `whoami` and `logout` against the running platform. */
describe('svc tenant, publicapi, verify, whoami', { timeout: 90_000 }, () => {
  let stack: TestStack;
  let home: string;
  let env: Record<string, string>;
  let acme: string;

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

  it('lists tenants, shows one, and selects the active tenant that later commands use', async () => {
    const listed = await svc(['tenant', 'list', '--format', 'json'], env);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.json.data).toContainEqual(expect.objectContaining({ id: acme, slug: 'acme', roles: expect.arrayContaining(['tenant-admin']) }));
    const direct = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    expect((await svc(['tenant', 'list', '--raw-user', '--format', 'json'], env)).json).toEqual(direct.body);

    const info = await svc(['tenant', 'info', 'acme'], env);
    expect(info.exitCode).toBe(0);
    expect(info.stdout).toMatch(new RegExp(`^id\\s+${acme}$`, 'm'));
    const unknown = await svc(['tenant', 'info', 'no-such-tenant', '--format', 'json'], env);
    expect(unknown.json.error).toMatchObject({ code: 'E202', message: 'Tenant no-such-tenant not found', exitCode: 5 });

    const noTenant = await svc(['resources', 'list', 'project', '--format', 'json'], env);
    expect(noTenant.json.error).toMatchObject({ code: 'E002', message: 'SVC_TENANT_ID environment variable not set' });
    const unnamed = await svc(['tenant', 'select'], env);
    expect(unnamed.exitCode).toBe(2);
    expect(unnamed.stderr).toContain('Required field missing: [tenant]');

    const selected = await svc(['tenant', 'select', 'acme', '--format', 'json'], env);
    expect(selected.exitCode, selected.stderr).toBe(0);
    expect(selected.json).toMatchObject({ id: acme, slug: 'acme' });
    expect(JSON.parse(await readFile(join(home, '.svc', 'context.json'), 'utf8'))).toEqual({ default: { tenantId: acme, tenantSlug: 'acme' } });
    expect((await svc(['resources', 'list', 'project', '--limit', '1', '--format', 'json'], env)).exitCode).toBe(0);
    expect((await svc(['whoami'], env)).stdout).toMatch(/^tenant\s+acme /m);

    const out = await svc(['logout'], env);
    expect(out.exitCode).toBe(0);
    await expect(stat(join(home, '.svc', 'context.json'))).rejects.toThrow();
  });

  it('calls allowed /v4/ paths with publicapi, and refuses others with E305 before any call', async () => {
    const me = await svc(['publicapi', 'get', '/v4/identity/me'], env);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ email: ADMIN });

    const withHeaders = await svc(['publicapi', 'get', '/v4/data/resources/{tenantId}/project', '--tenant-id', acme, '--param', 'limit=1', '--include-headers', '--format', 'json'], env);
    expect(withHeaders.json).toMatchObject({ status: 200, headers: expect.objectContaining({ 'content-type': expect.stringContaining('json') }), body: { limit: 1 } });

    const created = await svc(['publicapi', 'post', `/v4/data/resources/${acme}/project`, '--data', '{"data":{"name":"Via publicapi"}}', '--format', 'json'], env);
    expect(created.json).toMatchObject({ version: 1, data: { name: 'Via publicapi' } });
    const deleted = await svc(['publicapi', 'delete', `/v4/data/resources/${acme}/project/${created.json.id}`], env);
    expect(deleted.exitCode).toBe(0);

    for (const path of ['/v3/resources', '/health', '/v4/admin/x', '/v4/data/../identity/me', '/v4/data/%2e%2e/identity/me', '/v4/data/other']) {
      const refused = await svc(['publicapi', 'get', path, '--format', 'json'], { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' });
      expect(refused.exitCode, path).toBe(2);
      expect(refused.json.error, path).toMatchObject({ code: 'E305', suggestion: 'check the input and retry', exitCode: 2 });
    }

    // The platform still authorizes: a member may not create object types.
    const forbidden = await svc(['publicapi', 'post', '/v4/data/resources/object-types', '--data', '{"name":"NotAllowed"}', '--format', 'json'], {
      ...env,
      SVC_TOKEN: await stack.token(MEMBER),
    });
    expect(forbidden.json).toEqual({ error: { code: 'E204', message: 'Permission denied', suggestion: 'lacking permission; contact an administrator', exitCode: 6 } });
  });

  it('lists tenants: administered ones by default, every membership with --all, the children of --parent, each call on stderr with --debug', async () => {
    const memberEnv = { ...env, SVC_TOKEN: await stack.token(MEMBER) };
    const slug = `cli-list-${randomBytes(3).toString('hex')}`;
    const child = await stack.request('POST', `/v4/platform/tenants/${acme}/children`, { as: ADMIN, body: { name: slug, slug } });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    expect((await stack.request('POST', `/v4/platform/tenants/${acme}/children/${child.body.id}/bootstrap-admin`, { as: ADMIN })).status).toBeLessThan(300);

    // Independent runs, side by side.
    const [administered, all, byParentSlug, byParentId, ofChild, debug, quiet] = await Promise.all([
      svc(['tenant', 'list', '--format', 'json'], memberEnv),
      svc(['tenant', 'list', '--all', '--format', 'json'], memberEnv),
      svc(['tenant', 'list', '--parent', 'acme', '--format', 'json'], env),
      svc(['tenant', 'list', '--parent', acme, '--format', 'json'], env),
      svc(['tenant', 'list', '--parent', slug, '--format', 'json'], env),
      svc(['tenant', 'list', '--debug'], env),
      svc(['tenant', 'list'], env),
    ]);
    expect(administered.exitCode, administered.stderr).toBe(0);
    expect(administered.json.data.find((t: any) => t.slug === 'acme')).toBeUndefined();
    expect(all.json.data).toContainEqual(expect.objectContaining({ slug: 'acme', roles: expect.not.arrayContaining(['tenant-admin']) }));
    for (const children of [byParentSlug, byParentId]) {
      expect(children.exitCode, children.stderr).toBe(0);
      expect(children.json.data.map((t: any) => t.slug)).toContain(slug);
      expect(children.json.data.every((t: any) => t.parentId === acme)).toBe(true);
    }
    expect(ofChild.json.data).toEqual([]);
    expect(debug.exitCode).toBe(0);
    expect(debug.stderr).toMatch(/^GET \/v4\/identity\/tenants\n-> 200\n$/m);
    expect(quiet.stderr).toBe('');
  });

  it('changes an object type with publicapi patch, the body from --file', async () => {
    const name = `Patched${randomBytes(3).toString('hex')}`;
    const created = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${acme}`, { as: ADMIN, body: { name, schema: { type: 'object', properties: { title: { type: 'string' } } } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const body = join(home, 'patch.json');
    await writeFile(body, JSON.stringify({ schema: { type: 'object', properties: { title: { type: 'string' }, due: { type: 'string' } } } }));
    const patched = await svc(['publicapi', 'patch', `/v4/data/resources/object-types/${created.body.objectTypeId}`, '--tenant-id', acme, '--file', body, '--format', 'json'], env);
    expect(patched.exitCode, patched.stdout + patched.stderr).toBe(0);
    expect(patched.json).toMatchObject({ objectTypeId: created.body.objectTypeId, name, version: created.body.version + 1 });
    expect(Object.keys(patched.json.schema.properties).sort()).toEqual(['due', 'title']);
    const listed = await stack.request('GET', `/v4/data/resources/object-types?tenant_id=${acme}`, { as: ADMIN });
    expect(listed.body.data.find((t: any) => t.objectTypeId === created.body.objectTypeId).schema.properties.due).toEqual({ type: 'string' });
  });

  it('verifies health, object types and the schema in plain text', async () => {
    const ok = await svc(['verify', '--tenant-id', acme], env);
    expect(ok.exitCode, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^✓ health: status ok\n✓ object types: \d+ visible\n✓ schema: \d+ published to .+\n$/);
    const noToken = await svc(['verify', '--tenant-id', acme, '--simple'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(noToken.exitCode).toBe(4);
    expect(noToken.stdout).toMatch(/^ok health: status ok\nFAILED object types: E101 Not logged in\n/);
  });

  it('shows who is logged in from the token, with no API call', async () => {
    const who = await svc(['whoami'], { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' });
    expect(who.exitCode).toBe(0);
    expect(who.stdout).toMatch(/^status\s+logged in$/m);
    expect(who.stdout).toMatch(/^token\s+SVC_TOKEN$/m);
    expect(who.stdout).toMatch(/^profile\s+default$/m);
    expect((await svc(['whoami'], { HOME: home })).stdout).toMatch(/^status\s+not logged in$/m);
  });
});
