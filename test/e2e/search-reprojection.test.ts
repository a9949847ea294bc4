import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { migrate } from '../../control-plane/app/migrate.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { ensureTenantLogin } from '../../control-plane/db/tenant-login.ts';
import { createDatabase, dropDatabase } from '../../scripts/stack/postgres.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * Projects written before the built-in `project` declared its search fields (migration 0035) had
 * no search projection: no write had made one. Migration 0038 asks for the built-in types' search
 * projections to be rebuilt, and the platform does so in the background at start-up
 * (docs/decisions/0181-search-projections-backfilled-at-start-up.md). Here, in a database of its
 * own (the request is one for every tenant, and no other test's rows should be projected by it),
 * rows are written as before (SQL, no projection) and the database is then upgraded to 0038; a
 * platform that starts then answers v4 search with them, without any write.
 */
describe('search projections of resources written before their type declared search fields', { timeout: 180_000 }, () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `reproject-${suffix}`;
  const admin = { sub: randomUUID(), email: `reproject-admin-${suffix}@reproject.test`, name: 'Reprojection admin', tenant: slug };
  const adminUrl = Object.assign(new URL(inject('databaseUrl')), { pathname: '/postgres' }).toString();
  const database = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let sql: postgres.Sql;
  let databaseUrl: string;
  let stack: TestStack;
  let tenantId: string;
  const search = (query: string) => stack.request('POST', `/v4/data/resources/${tenantId}/search`, { as: admin.email, body: { query, mode: 'fulltext', limit: 50 } });
  const chunksOf = async (ids: string[]) =>
    (await sql<{ id: string }[]>`select source_id as id from search_chunks where tenant_id = ${tenantId}::uuid and source_kind = 'resource' and source_id = any(${ids})`).map((r) => r.id);

  beforeAll(async () => {
    databaseUrl = await createDatabase(adminUrl, database);
    await migrate(databaseUrl);
    sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    tenantId = tenant!.id;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
    }
    const [user] = await sql<{ id: string }[]>`insert into users (email, name) values (${admin.email}, ${admin.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${user!.id}::uuid, ${['admin', 'tenant-admin']})`;
  });
  afterAll(async () => {
    await sql?.end();
    await stack?.close();
    await dropDatabase(adminUrl, database).catch(() => undefined);
  });

  it('finds projects that were never projected once the platform has started, without a write', async () => {
    // More rows than one page of the backfill, all written at the same instant (one statement): the pages go on by id.
    const older = await sql<{ id: string }[]>`
      insert into resources (tenant_id, type, data)
      select ${tenantId}::uuid, 'project', jsonb_build_object('name', 'Lighthouse ' || n, 'description', 'Repaint the lantern room of tower ' || n, 'status', 'active', 'budget', n)
      from generate_series(1, 600) n
      returning id::text as id`;
    const [unnamed] = await sql<{ id: string }[]>`
      insert into resources (tenant_id, type, data) values (${tenantId}::uuid, 'project', '{"status": "active", "budget": 5}') returning id::text as id`;
    expect(await chunksOf(older.map((r) => r.id))).toEqual([]);
    // The database is upgraded to 0038 with these rows in it: the migration asks for the built-in
    // types that declare search fields to be projected again (a new database, without rows, is not asked).
    const requested = () => sql<{ key: string }[]>`select key from object_types where tenant_id is null and search_reprojection_requested_at is not null`;
    expect(await requested()).toEqual([]);
    await sql`delete from schema_migrations where version = '0038_search_reprojection_requests.sql'`;
    await sql`alter table object_types drop column search_reprojection_requested_at, drop column search_reprojection_lease_until`;
    expect(await migrate(databaseUrl)).toEqual(['0038_search_reprojection_requests.sql']);
    expect((await requested()).map((r) => r.key)).toEqual(['project']);

    stack = await startTestStack({ devUsers: [...DEV_USERS, admin], database: { url: databaseUrl, tenantUrl: await ensureTenantLogin(databaseUrl) } });
    const found = await until(() => search('lantern tower 537'), (answer) => answer.status !== 200 || answer.body.data.length > 0);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.data[0]).toMatchObject({ objectType: 'project', fields: { name: 'Lighthouse 537' } });

    // Every page of the tenant's projects, and the request cleared once they all are.
    const request = async () => (await sql<{ at: Date | null }[]>`select search_reprojection_requested_at as at from object_types where tenant_id is null and key = 'project'`)[0]!.at;
    await until(request, (at) => at === null);
    expect((await chunksOf(older.map((r) => r.id))).length).toBe(older.length);
    // A project without a name or description has nothing to search: it stays without a projection.
    expect(await chunksOf([unnamed!.id])).toEqual([]);

    // Asked again (a later migration), a start writes none of the projections that are current: their chunks (and vectors) stay.
    const chunkIds = async () => (await sql<{ id: string }[]>`select id::text as id from search_chunks where tenant_id = ${tenantId}::uuid order by id`).map((r) => r.id);
    const before = await chunkIds();
    await sql`update object_types set search_reprojection_requested_at = now() where tenant_id is null and key = 'project'`;
    const again = await startTestStack({ devUsers: [...DEV_USERS, admin], database: { url: databaseUrl, tenantUrl: await ensureTenantLogin(databaseUrl) } });
    try {
      await until(request, (at) => at === null);
    } finally {
      await again.close();
    }
    expect(await chunkIds()).toEqual(before);
  });
});
