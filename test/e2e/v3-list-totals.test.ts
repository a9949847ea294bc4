import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';

/**
 * Totals a client can choose, through HTTP: exact while few match, estimated past the bound
 * (`totalExact: false`, `Content-Range: 0-19/*`) unless the request asks for `count=exact` by
 * parameter or `Prefer`; and a project created through v3 found by v4 search (the built-in type's
 * search fields). The run works on a tenant of its own, so that its thousand projects are nobody
 * else's totals.
 */
describe('v3 list totals and built-in search fields', () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `totals-${suffix}`;
  const admin = { sub: randomUUID(), email: `totals-admin-${suffix}@totals.test`, name: 'Totals admin', tenant: slug };
  const sql = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
  let stack: TestStack;
  let tenantId: string;
  const v3 = (path: string, headers: Record<string, string> = {}) => stack.request('GET', `${V3}${path}`, { as: admin.email, headers: { 'x-tenant-id': tenantId, ...headers } });

  beforeAll(async () => {
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    tenantId = tenant!.id;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
    }
    const [user] = await sql<{ id: string }[]>`insert into users (email, name) values (${admin.email}, ${admin.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${user!.id}::uuid, ${['admin', 'tenant-admin']})`;
    await sql`
      insert into resources (tenant_id, type, data)
      select ${tenantId}::uuid, 'project', jsonb_build_object('name', 'Bulk ' || n, 'status', case when n % 2 = 0 then 'active' else 'completed' end, 'budget', 1000 + n)
      from generate_series(1, 2400) n`;
    await sql`analyze resources`;
    stack = await startTestStack({ devUsers: [...DEV_USERS, admin] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const LIST = '/resources?type=project&filter[status]=active&filter[budget.gte]=1000&sort=-budget,createdAt&limit=20';

  it('answers an exact total while few rows match', async () => {
    const few = await v3('/resources?type=project&filter[budget.gte]=3390&limit=5&offset=2');
    expect(few.status, JSON.stringify(few.body)).toBe(200);
    // An exact total says nothing more: the v3 page keeps its four fields.
    expect(Object.keys(few.body).sort()).toEqual(['data', 'hasMore', 'nextCursor', 'total']);
    expect([few.body.total, few.body.data.length]).toEqual([11, 5]);
    expect(few.headers.get('content-range')).toBe('2-6/11');
  });

  it('estimates past the bound, with exact pages and cursors, and counts every row when asked', async () => {
    const estimated = await v3(LIST);
    expect(estimated.status, JSON.stringify(estimated.body)).toBe(200);
    expect(estimated.body.totalExact).toBe(false);
    expect(estimated.body.total).toBeGreaterThan(1000);
    expect(estimated.headers.get('content-range')).toBe('0-19/*');
    expect(estimated.body.data.map((p: any) => p.budget)).toEqual(Array.from({ length: 20 }, (_, i) => 3400 - 2 * i));
    expect(estimated.body.hasMore).toBe(true);
    const next = await v3(`${LIST}&cursor=${encodeURIComponent(estimated.body.nextCursor)}`);
    expect(next.body.data[0].budget).toBe(3360);

    const byParameter = await v3(`${LIST}&count=exact`);
    expect([byParameter.body.total, byParameter.body.totalExact, byParameter.headers.get('content-range')]).toEqual([1200, undefined, '0-19/1200']);
    const byPreference = await v3(LIST, { prefer: 'count=exact' });
    expect([byPreference.body.total, byPreference.body.totalExact]).toEqual([1200, undefined]);
    const v4 = await stack.request('GET', `/v4/data/resources/${tenantId}/project?where=${encodeURIComponent('{"status":"active"}')}&limit=20`, { as: admin.email, headers: { prefer: 'count=exact' } });
    expect([v4.body.total, v4.body.totalExact, v4.headers.get('content-range')]).toEqual([1200, undefined, '0-19/1200']);
    expect((await v3(`${LIST}&count=everything`)).status).toBe(400);
  });

  it('finds a project created through v3 by its name and description through v4 search', async () => {
    const created = await stack.request('POST', `${V3}/resources/project`, {
      as: admin.email,
      headers: { 'x-tenant-id': tenantId },
      body: { name: 'Harbour crane refit', description: 'Replace the hydraulic winches on the quay cranes', status: 'active' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const found = await stack.request('POST', `/v4/data/resources/${tenantId}/search`, { as: admin.email, body: { query: 'hydraulic winches', mode: 'fulltext' } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.data[0]).toMatchObject({ id: created.body.id, objectType: 'project', fields: { name: 'Harbour crane refit' } });
  });
});
