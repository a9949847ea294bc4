import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * v4 verticals: `/v4/verticals/{key}/...` serves an enrolled app's enrollment, object types and
 * resources, in the app's tenant (its child tenant, else the company tenant), to members of the
 * company tenant or of the app's child tenant, and to no one else.
 */
describe('v4 verticals', { timeout: 120_000 }, () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `vert-${suffix}`;
  const childSlug = `vert-child-${suffix}`;
  const user = (role: string, tenant?: string) => ({ sub: randomUUID(), email: `vert-${role}-${suffix}@vert.test`, name: `Vert ${role}`, ...(tenant ? { tenant } : {}) });
  const admin = user('admin', slug);
  const member = user('member', slug);
  const viewer = user('viewer', slug);
  const childUser = user('child', childSlug);
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let companyId: string;
  let childId: string;
  const fieldKey = `field-${suffix}`;
  const officeKey = `office-${suffix}`;
  const pausedKey = `paused-${suffix}`;

  const vertical = (method: string, path: string, as: string, options: { tenant?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    stack.request(method, `/v4/verticals/${path}${options.tenant ? `${path.includes('?') ? '&' : '?'}tenant_id=${options.tenant}` : ''}`, {
      as,
      body: options.body,
      headers: options.headers,
    });
  const rowsNamed = async (name: string) => (await sql<{ n: number }[]>`select count(*)::int as n from resources where type = 'project' and data ->> 'name' = ${name}`)[0]!.n;

  beforeAll(async () => {
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    companyId = tenant!.id;
    for (const [name, permissions] of Object.entries({ ...DEFAULT_ROLES, viewer: ['resources.read'] })) {
      await sql`insert into roles (tenant_id, name, permissions) values (${companyId}::uuid, ${name}, ${permissions})`;
    }
    for (const [who, roles] of [[admin, ['tenant-admin']], [member, ['member']], [viewer, ['viewer']]] as const) {
      const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${who.email}, ${who.name}) returning id::text as id`;
      await sql`insert into memberships (tenant_id, user_id, roles) values (${companyId}::uuid, ${row!.id}::uuid, ${roles})`;
    }
    stack = await startTestStack({ devUsers: [...DEV_USERS, admin, member, viewer, childUser] });

    // Field: an app with a child tenant; Office: one without; Paused: a suspended one.
    const field = await stack.request('POST', `/v4/platform/tenants/${companyId}/apps`, {
      as: admin.email,
      body: { name: 'Field', key: fieldKey, childTenant: { name: 'Field tenant', slug: childSlug } },
    });
    expect(field.status, JSON.stringify(field.body)).toBe(201);
    childId = field.body.childTenantId;
    await until(
      () => stack.request('GET', '/v4/identity/tenants', { as: admin.email }),
      (r) => r.body.data.some((t: any) => t.id === childId && t.status === 'active'),
    );
    for (const body of [{ name: 'Office', key: officeKey }, { name: 'Paused', key: pausedKey, status: 'suspended' }]) {
      expect((await stack.request('POST', `/v4/platform/tenants/${companyId}/apps`, { as: admin.email, body })).status).toBe(201);
    }
    // A member of the child tenant only.
    const me = await stack.request('GET', '/v4/identity/me', { as: childUser.email });
    const granted = await stack.request('POST', `/v4/platform/tenants/${childId}/users/${me.body.id}/provision`, { as: admin.email });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    const accepted = await stack.request('POST', '/v4/identity/me/provision', { as: childUser.email, body: { tenant_id: childId } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it("shows the enrollment, the app's tenant and its object types to members of the company tenant and of the child tenant", async () => {
    const byAdmin = await vertical('GET', fieldKey, admin.email, { tenant: companyId });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);
    expect(byAdmin.body.app).toMatchObject({ key: fieldKey, name: 'Field', companyTenantId: companyId, childTenantId: childId, childTenantSlug: childSlug, status: 'pending' });
    expect(byAdmin.body.tenant).toEqual({ id: childId, slug: childSlug, status: 'active' });
    expect(byAdmin.body.objectTypes.map((t: any) => t.key)).toContain('project');

    // The caller's own tenant by default; the child tenant, by id or slug; any member.
    expect((await vertical('GET', fieldKey, admin.email)).body).toEqual(byAdmin.body);
    expect((await vertical('GET', fieldKey, childUser.email, { tenant: childSlug })).body).toEqual(byAdmin.body);
    expect((await vertical('GET', fieldKey, childUser.email)).body).toEqual(byAdmin.body);
    expect((await vertical('GET', fieldKey, member.email, { tenant: slug })).status).toBe(200);

    // An app without a child tenant keeps its resources in the company tenant.
    const office = await vertical('GET', officeKey, member.email);
    expect(office.status).toBe(200);
    expect(office.body.tenant).toEqual({ id: companyId, slug, status: 'active' });
  });

  it("serves the app's resources in its child tenant, through the data API's rules", async () => {
    const name = `Inspection ${suffix}`;
    const created = await vertical('POST', `${fieldKey}/resources/project`, member.email, { tenant: slug, body: { data: { name, status: 'open' } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    const id = created.body.id;
    // Stored in the child tenant, not in the company tenant.
    expect((await stack.request('GET', `/v4/data/resources/${childId}/project/${id}`, { as: admin.email })).status).toBe(200);
    expect((await stack.request('GET', `/v4/data/resources/${companyId}/project/${id}`, { as: admin.email })).status).toBe(404);

    const listed = await vertical('GET', `${fieldKey}/resources/project?where=${encodeURIComponent(JSON.stringify({ name }))}`, childUser.email, { tenant: childId });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body).toMatchObject({ total: 1, page: 1, limit: 20, hasMore: false, nextCursor: null });
    expect(listed.body.data.map((r: any) => r.id)).toEqual([id]);

    const read = await vertical('GET', `${fieldKey}/resources/project/${id}`, childUser.email);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect((await vertical('GET', `${fieldKey}/resources/project/${id}`, childUser.email, { headers: { 'if-none-match': '"1"' } })).status).toBe(304);

    const replaced = await vertical('PUT', `${fieldKey}/resources/project/${id}`, childUser.email, { body: { data: { name, status: 'done' }, version: 1 } });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ version: 2, data: { status: 'done' } });
    const stale = await vertical('PUT', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { name }, version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 2 } });
    expect((await vertical('PUT', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { name } } })).status).toBe(428);

    // PATCH merges the fields given into the stored data; a version (body or If-Match) makes it conditional.
    const patched = await vertical('PATCH', `${fieldKey}/resources/project/${id}`, childUser.email, { body: { data: { status: 'archived' } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.headers.get('etag')).toBe('"3"');
    expect(patched.body).toMatchObject({ id, version: 3, data: { name, status: 'archived' } });
    const stalePatch = await vertical('PATCH', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { status: 'open' } }, headers: { 'if-match': '"2"' } });
    expect(stalePatch.status).toBe(409);
    expect(stalePatch.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 3 } });
    expect((await vertical('PATCH', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { status: 'open' }, version: 2 } })).status).toBe(409);
    const atVersion = await vertical('PATCH', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { status: 'open' }, version: 3 } });
    expect(atVersion.status, JSON.stringify(atVersion.body)).toBe(200);
    expect(atVersion.body).toMatchObject({ version: 4, data: { name, status: 'open' } });
    expect((await vertical('GET', `${fieldKey}/resources/project/${id}`, childUser.email)).body).toEqual(atVersion.body);
    const unknownField = await vertical('PATCH', `${fieldKey}/resources/project/${id}`, member.email, { body: { data: { colour: 'red' } } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.details.field).toContain('colour');
    expect((await vertical('DELETE', `${fieldKey}/resources/project/${id}`, member.email, { headers: { 'if-match': '"1"' } })).status).toBe(409);
    expect((await vertical('DELETE', `${fieldKey}/resources/project/${id}`, member.email)).status).toBe(204);
    expect((await vertical('GET', `${fieldKey}/resources/project/${id}`, childUser.email)).status).toBe(404);

    // The app without a child tenant writes to the company tenant.
    const office = await vertical('POST', `${officeKey}/resources/project`, admin.email, { body: { data: { name: `Office ${suffix}` } } });
    expect(office.status).toBe(201);
    expect((await stack.request('GET', `/v4/data/resources/${companyId}/project/${office.body.id}`, { as: admin.email })).status).toBe(200);
  });

  it('refuses everyone else, and callers without the permission, changing nothing', async () => {
    const planted = `Planted ${suffix}`;
    const seeded = await vertical('POST', `${fieldKey}/resources/project`, admin.email, { body: { data: { name: `Kept ${suffix}` } } });
    expect(seeded.status).toBe(201);
    const id = seeded.body.id;

    // Another tenant's administrator: their own tenant has no such app; naming ours is not their membership.
    expect((await vertical('GET', fieldKey, GLOBEX_ADMIN)).status).toBe(404);
    for (const tenant of [companyId, childId, slug]) {
      const refused = [
        await vertical('GET', fieldKey, GLOBEX_ADMIN, { tenant }),
        await vertical('GET', `${fieldKey}/resources/project`, GLOBEX_ADMIN, { tenant }),
        await vertical('GET', `${fieldKey}/resources/project/${id}`, GLOBEX_ADMIN, { tenant }),
        await vertical('POST', `${fieldKey}/resources/project`, GLOBEX_ADMIN, { tenant, body: { data: { name: planted } } }),
        await vertical('PUT', `${fieldKey}/resources/project/${id}`, GLOBEX_ADMIN, { tenant, body: { data: { name: planted }, version: 1 } }),
        await vertical('PATCH', `${fieldKey}/resources/project/${id}`, GLOBEX_ADMIN, { tenant, body: { data: { name: planted } } }),
        await vertical('DELETE', `${fieldKey}/resources/project/${id}`, GLOBEX_ADMIN, { tenant }),
      ];
      for (const answer of refused) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(403);
        expect(answer.body.error.code).toBe('FORBIDDEN');
      }
    }
    // A member of the child tenant is no member of the company tenant, and sees no other app of it.
    expect((await vertical('GET', fieldKey, childUser.email, { tenant: companyId })).status).toBe(403);
    expect((await vertical('GET', officeKey, childUser.email, { tenant: childId })).status).toBe(404);
    expect((await vertical('POST', `${officeKey}/resources/project`, childUser.email, { tenant: childId, body: { data: { name: planted } } })).status).toBe(404);

    // A member whose role only reads.
    expect((await vertical('GET', `${fieldKey}/resources/project/${id}`, viewer.email)).status).toBe(200);
    const write = await vertical('POST', `${fieldKey}/resources/project`, viewer.email, { body: { data: { name: planted } } });
    expect(write.status).toBe(403);
    expect(write.body.error.message).toContain('resources.create');
    expect((await vertical('DELETE', `${fieldKey}/resources/project/${id}`, viewer.email)).status).toBe(403);
    const patch = await vertical('PATCH', `${fieldKey}/resources/project/${id}`, viewer.email, { body: { data: { name: planted } } });
    expect(patch.status).toBe(403);
    expect(patch.body.error.message).toContain('resources.update');
    expect((await stack.request('GET', `/v4/verticals/${fieldKey}`)).status).toBe(401);

    expect(await rowsNamed(planted)).toBe(0);
    expect((await vertical('GET', `${fieldKey}/resources/project/${id}`, admin.email)).body).toEqual(seeded.body);
  });

  it("shows a suspended app's enrollment but not its resources", async () => {
    const paused = await vertical('GET', pausedKey, member.email);
    expect(paused.status).toBe(200);
    expect(paused.body.app.status).toBe('suspended');
    const list = await vertical('GET', `${pausedKey}/resources/project`, member.email);
    expect(list.status).toBe(403);
    expect(list.body.error.message).toContain('suspended');
    expect((await vertical('POST', `${pausedKey}/resources/project`, member.email, { body: { data: { name: `Paused ${suffix}` } } })).status).toBe(403);
    expect(await rowsNamed(`Paused ${suffix}`)).toBe(0);
  });

  it('refuses bad input with 400 naming the field, unknown apps and types with 404, and changes nothing', async () => {
    const name = `Bad input ${suffix}`;
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', 'Not_A_Key', undefined, 'key'],
      ['GET', `${fieldKey}/resources/project?limit=0`, undefined, 'limit'],
      ['GET', `${fieldKey}/resources/project?page=1&cursor=abc`, undefined, 'cursor'],
      ['GET', `${fieldKey}/resources/project?where=nope`, undefined, 'where'],
      ['POST', `${fieldKey}/resources/project`, { data: { name, colour: 'red' } }, 'colour'],
      ['POST', `${fieldKey}/resources/project`, { data: { name }, type: 'project' }, 'type'],
      ['POST', `${fieldKey}/resources/project`, { data: { name }, key: 'other' }, 'key'],
      ['POST', `${fieldKey}/resources/project`, [{ name }], '(body)'],
      ['PUT', `${fieldKey}/resources/project/${randomUUID()}`, { version: 1 }, 'data'],
      ['PATCH', `${fieldKey}/resources/project/${randomUUID()}`, { version: 1 }, 'data'],
    ];
    for (const [method, path, body, field] of cases) {
      const refused = await vertical(method, path, admin.email, { body });
      expect(refused.status, `${method} ${path}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_ERROR');
      expect(refused.body.error.details.field, `${method} ${path}`).toContain(field);
    }
    expect((await vertical('GET', `${fieldKey}/resources/project?tenant_id=${slug}&tenant_id=${childSlug}`, admin.email)).status).toBe(400);
    const unknownApp = await vertical('GET', `never-${suffix}`, admin.email);
    expect(unknownApp.status).toBe(404);
    expect(unknownApp.body.error.code).toBe('NOT_FOUND');
    expect((await vertical('GET', `${fieldKey}/resources/no-such-type-${suffix}`, admin.email)).status).toBe(404);
    expect((await vertical('GET', `${fieldKey}/resources/project/not-an-id`, admin.email)).status).toBe(404);
    expect(await rowsNamed(name)).toBe(0);
  });

  it("answers 409 while the app's tenant is not active, and serves again once it is", async () => {
    await sql`update tenants set status = 'failed', status_reason = 'test' where id = ${childId}::uuid`;
    try {
      const vert = await vertical('GET', fieldKey, admin.email);
      expect(vert.status).toBe(200);
      expect(vert.body.tenant.status).toBe('failed');
      const list = await vertical('GET', `${fieldKey}/resources/project`, admin.email);
      expect(list.status).toBe(409);
      expect(list.body.error).toMatchObject({ code: 'CONFLICT', details: { tenantStatus: 'failed' } });
    } finally {
      await sql`update tenants set status = 'active', status_reason = null where id = ${childId}::uuid`;
    }
    expect((await vertical('GET', `${fieldKey}/resources/project`, admin.email)).status).toBe(200);
  });
});
