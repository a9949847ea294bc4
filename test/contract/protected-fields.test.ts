import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type ApiResponse, type TestStack } from '../harness/stack.ts';

/**
 * Fields a caller may not set (the tenant, ids, versions, authors, roles, the platform's own
 * flags) sent on every create and update of resources (v3, v4, batches), users, object types and
 * tenants: each request is refused (400) or the fields are ignored, which reading the record back
 * through the API and in PostgreSQL shows.
 */
const PLATFORM_ADMIN = 'platform@svc.test';
const run = randomUUID().slice(0, 8);
const FORGED_ID = randomUUID();
const LONG_AGO = '2000-01-01T00:00:00.000Z';

let stack: TestStack;
const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
let acme: string;
let globex: string;
let admin: { id: string };
let member: { id: string; role: string; permissions: string[]; email: string };
let globexAdmin: { id: string };
/** An object type of acme whose schema takes any field. */
const looseType = `loose-${run}`;

/** What a caller might send to take over a record: every one names something not theirs. */
const forged = () => ({
  id: FORGED_ID,
  tenantId: globex,
  tenant_id: globex,
  version: 42,
  createdBy: globexAdmin.id,
  updatedBy: globexAdmin.id,
  createdAt: LONG_AGO,
  updatedAt: LONG_AGO,
});

/** A 400 VALIDATION_ERROR, or a success whose record `readBack` shows untouched by the forged fields. */
async function refusedOrIgnored(answer: ApiResponse, readBack: () => Promise<void>, nothingCreated?: () => Promise<void>): Promise<'refused' | 'ignored'> {
  if (answer.status === 400) {
    expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    await nothingCreated?.();
    return 'refused';
  }
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
  await readBack();
  return 'ignored';
}

const resourceRow = async (id: string) => (await sql`select id::text, tenant_id::text, version, created_by::text, updated_by::text, created_at from resources where id = ${id}::uuid`)[0];
const noForgedRow = async () => expect(await sql`select 1 from resources where id = ${FORGED_ID}::uuid union all select 1 from tenants where id = ${FORGED_ID}::uuid union all select 1 from object_types where id = ${FORGED_ID}::uuid`).toHaveLength(0);

beforeAll(async () => {
  stack = await startTestStack();
  const tenants = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data;
  acme = tenants.find((t: any) => t.slug === 'acme').id;
  globex = (await sql`select id::text from tenants where slug = 'globex'`)[0]!.id;
  admin = (await stack.request('GET', `${V3}/users/me`, { as: ADMIN })).body;
  member = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
  globexAdmin = (await stack.request('GET', `${V3}/users/me`, { as: GLOBEX_ADMIN })).body;
  const loose = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${acme}`, { as: ADMIN, body: { name: `Loose${run}`, key: looseType, schema: { type: 'object' } } });
  expect(loose.status, JSON.stringify(loose.body)).toBe(201);
});
afterAll(async () => {
  await sql.end();
  await stack?.close();
});

describe('fields a caller may not set', () => {
  it('on v3 resources: create, replace and update ignore them', async () => {
    // `tenant_id` is v4's query name, not a field of a project: refused, like any unknown field.
    const unknown = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: `protected ${run}`, ...forged() } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe('tenant_id');
    const { tenant_id: _, ...serverOwned } = forged();
    const created = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: `protected ${run}`, ...serverOwned, type: 'other' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    expect(id).not.toBe(FORGED_ID);
    expect(created.body).toMatchObject({ type: 'project', name: `protected ${run}` });
    for (const field of ['tenantId', 'tenant_id', 'version', 'createdBy', 'updatedBy']) expect(created.body).not.toHaveProperty(field);
    expect(created.body.createdAt).not.toBe(LONG_AGO);
    await noForgedRow();
    expect(await resourceRow(id)).toMatchObject({ tenant_id: acme, version: 1, created_by: admin.id, updated_by: admin.id });

    for (const [method, version] of [['PUT', 2], ['PATCH', 3]] as const) {
      const changed = await stack.request(method, `${V3}/resources/project/${id}`, { as: MEMBER, body: { name: `changed ${run}`, ...serverOwned } });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ id, type: 'project', name: `changed ${run}` });
      for (const field of ['tenantId', 'version', 'createdBy', 'updatedBy']) expect(changed.body).not.toHaveProperty(field);
      expect(await resourceRow(id)).toMatchObject({ tenant_id: acme, version, created_by: admin.id, updated_by: member.id });
    }
    const read = await stack.request('GET', `${V3}/resources/project/${id}`, { as: ADMIN });
    expect(read.body.createdAt).toBe(created.body.createdAt);
  });

  it('on v4 resources: create, replace and batches refuse or ignore them', async () => {
    const base = `/v4/data/resources/${acme}/${looseType}`;
    const outcomes: string[] = [];
    const create = await stack.request('POST', base, { as: ADMIN, body: { data: { name: `v4 ${run}` }, ...forged(), type: 'other' } });
    outcomes.push(await refusedOrIgnored(create, async () => expect(create.body).toMatchObject({ version: 1, createdBy: admin.id, type: looseType }), noForgedRow));

    // Inside `data` (of a type that takes any field) the names are the caller's own data, and change nothing the server owns.
    const own = await stack.request('POST', base, { as: ADMIN, body: { data: { name: `v4 data ${run}`, ...forged() } } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect(own.body).toMatchObject({ version: 1, createdBy: admin.id, updatedBy: admin.id, type: looseType });
    expect(own.body.id).not.toBe(FORGED_ID);
    expect(await resourceRow(own.body.id)).toMatchObject({ tenant_id: acme, version: 1, created_by: admin.id });
    const id = own.body.id;

    const replace = await stack.request('PUT', `${base}/${id}`, { as: MEMBER, body: { data: { name: `replaced ${run}` }, version: 1, createdBy: globexAdmin.id, updatedBy: globexAdmin.id, tenantId: globex, id: FORGED_ID } });
    outcomes.push(await refusedOrIgnored(replace, async () => expect(replace.body).toMatchObject({ id, version: 2, createdBy: admin.id, updatedBy: member.id })));

    const batchCreate = await stack.request('POST', `${base}/batch/create`, { as: ADMIN, body: { items: [{ name: `batch ${run}` }], ...forged() } });
    outcomes.push(await refusedOrIgnored(batchCreate, async () => expect(batchCreate.body.data[0]).toMatchObject({ version: 1, createdBy: admin.id }), noForgedRow));

    const { version } = (await stack.request('GET', `${base}/${id}`, { as: ADMIN })).body;
    const batchUpdate = await stack.request('POST', `${base}/batch/update`, { as: MEMBER, body: { items: [{ id, data: { name: `batch updated ${run}` }, version, createdBy: globexAdmin.id, tenantId: globex }] } });
    outcomes.push(await refusedOrIgnored(batchUpdate, async () => expect(batchUpdate.body.data[0]).toMatchObject({ id, createdBy: admin.id, updatedBy: member.id })));

    const after = await resourceRow(id);
    expect(after).toMatchObject({ tenant_id: acme, created_by: admin.id });
    expect([admin.id, member.id]).toContain(after!.updated_by);
    expect(outcomes.length).toBe(4);
  });

  it('on users: no caller sets a role, permissions, e-mail address, tenant or platform role', async () => {
    const escalate = { name: `Member ${run}`, role: 'admin', roles: ['admin', 'tenant-admin'], permissions: ['users.manage', 'tenants.manage'], tenantId: globex, id: admin.id, email: 'owner@acme.test', status: 'inactive', platformRoles: ['platform-admin'] };
    const before = await sql`select roles from memberships where user_id = ${member.id}::uuid`;
    for (const path of [`${V3}/users/me`, `${V3}/users/${member.id}`]) {
      const answer = await stack.request('PATCH', path, { as: MEMBER, body: escalate });
      await refusedOrIgnored(answer, async () => expect(answer.body).toMatchObject({ id: member.id, role: member.role, permissions: member.permissions, email: member.email, status: 'active' }));
    }
    const byAdmin = await stack.request('PATCH', `${V3}/users/${member.id}`, { as: ADMIN, body: { roles: ['tenant-admin'], role: 'tenant-admin', permissions: ['tenants.manage'] } });
    await refusedOrIgnored(byAdmin, async () => expect(byAdmin.body).toMatchObject({ role: member.role, permissions: member.permissions }));
    const profile = await stack.request('PATCH', '/v4/identity/me/profile', { as: MEMBER, body: { name: `Member ${run}`, platformRoles: ['platform-admin'], email: 'owner@acme.test', id: admin.id, status: 'inactive' } });
    await refusedOrIgnored(profile, async () => expect(profile.body).toMatchObject({ id: member.id, email: member.email, platformRoles: [] }));

    expect(await sql`select roles from memberships where user_id = ${member.id}::uuid`).toEqual(before);
    const [stored] = await sql`select email, status, platform_roles from users where id = ${member.id}::uuid`;
    expect(stored).toEqual({ email: member.email, status: 'active', platform_roles: [] });
    const again = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
    expect(again).toMatchObject({ role: member.role, permissions: member.permissions, tenantId: acme });
  });

  it('on object types: create and update refuse or ignore ids, versions, the tenant and built-in', async () => {
    const path = `/v4/data/resources/object-types?tenant_id=${acme}`;
    const name = `Guarded${run.replace(/[^a-z0-9]/gi, '')}`;
    const body = { name, schema: { type: 'object' }, objectTypeId: FORGED_ID, version: 9, builtIn: true, writtenThrough: 'other', createdBy: globexAdmin.id, tenantId: globex };
    const created = await stack.request('POST', path, { as: ADMIN, body });
    await refusedOrIgnored(created, async () => expect(created.body).toMatchObject({ version: 1, builtIn: false, writtenThrough: null }), noForgedRow);
    const plain = created.status === 201 ? created : await stack.request('POST', path, { as: ADMIN, body: { name, schema: { type: 'object' } } });
    expect(plain.status).toBe(201);
    const typeId = plain.body.objectTypeId;
    expect(typeId).not.toBe(FORGED_ID);
    const update = await stack.request('PATCH', `/v4/data/resources/object-types/${typeId}?tenant_id=${acme}`, { as: ADMIN, body: { status: 'published', objectTypeId: FORGED_ID, version: 99, builtIn: true, key: 'project', tenantId: globex } });
    await refusedOrIgnored(update, async () => expect(update.body).toMatchObject({ objectTypeId: typeId, builtIn: false, key: plain.body.key }));
    const [row] = await sql`select tenant_id::text, key from object_types where id = ${typeId}::uuid`;
    expect(row).toEqual({ tenant_id: acme, key: plain.body.key });
    await noForgedRow();
  });

  it('on tenants: the id, status, parent and plan are the platform’s', async () => {
    const takeover = { id: FORGED_ID, tenantId: globex, status: 'active', statusReason: 'forged', parentId: globex, plan: 'enterprise', createdAt: LONG_AGO, deletedAt: null };
    const root = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: `Root ${run}`, slug: `root-${run}`, homeRegion: 'eu', ...takeover } });
    await refusedOrIgnored(root, async () => expect(root.body).toMatchObject({ parentId: null, status: 'provisioning' }), noForgedRow);
    const child = await stack.request('POST', `/v4/platform/tenants/${acme}/children`, { as: ADMIN, body: { name: `Child ${run}`, slug: `child-${run}`, ...takeover } });
    await refusedOrIgnored(child, async () => expect(child.body).toMatchObject({ parentId: acme, status: 'provisioning' }), noForgedRow);
    const made = await sql`select parent_id::text, plan from tenants where slug in (${`root-${run}`}, ${`child-${run}`}) order by slug`;
    for (const tenant of made) expect(tenant.plan).not.toBe('enterprise');
    expect(made.filter((t) => t.parent_id === globex)).toEqual([]);
    await noForgedRow();
  });
});
