import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { APP_ROLE } from './client.ts';
import { PUBLISHED_VIEWS } from './table-owners.ts';

/**
 * The views a domain publishes for others to read hold the row-level security of the table beneath
 * them: a tenant transaction sees through a view exactly the rows it sees in the table, none of
 * another tenant's, and none at all with no tenant set (built-in object types aside).
 */
const owner = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
const tenantLogin = postgres(inject('tenantDatabaseUrl'), { max: 1, onnotice: () => {}, connection: { role: APP_ROLE } });
afterAll(async () => {
  await tenantLogin.end({ timeout: 5 });
  await owner.end({ timeout: 5 });
});

/** Each view, the table beneath it and the column that names a row's tenant (a user's id, for users). */
const VIEWS: Record<keyof typeof PUBLISHED_VIEWS, { table: string; tenant: string }> = {
  tenant_directory: { table: 'tenants', tenant: 'id' },
  tenant_members: { table: 'memberships', tenant: 'tenant_id' },
  user_directory: { table: 'users', tenant: 'id' },
  tenant_roles: { table: 'roles', tenant: 'tenant_id' },
  object_type_catalog: { table: 'object_types', tenant: 'tenant_id' },
  resource_rows: { table: 'resources', tenant: 'tenant_id' },
};

let acme: string;
let globex: string;
/** The member of globex. */
let globexUser: string;
beforeAll(async () => {
  const suffix = randomBytes(4).toString('hex');
  [acme, globex] = [randomUUID(), randomUUID()];
  await owner`insert into tenants (id, slug, name) values (${acme}, ${`views-a-${suffix}`}, 'Views A'), (${globex}, ${`views-b-${suffix}`}, 'Views B')`;
  for (const tenant of [acme, globex]) {
    const [user] = await owner<{ id: string }[]>`insert into users (email, name) values (${`${tenant}@views.test`}, 'V') returning id`;
    await owner`insert into memberships (tenant_id, user_id, roles) values (${tenant}, ${user!.id}, '{member}')`;
    globexUser = user!.id;
    await owner`insert into roles (tenant_id, name, permissions) values (${tenant}, 'member', '{resources.read}')`;
    await owner`insert into object_types (tenant_id, key, name, schema) values (${tenant}, ${`views-${suffix}`}, ${`Views${suffix}`}, '{}')`;
    await owner`insert into resources (tenant_id, type, data) values (${tenant}, ${`views-${suffix}`}, '{}')`;
  }
});

/** Counts, in one rolled-back transaction as svc_app with `tenant` set ('' for none). */
async function countsAs(tenant: string, statements: Record<string, string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const rollback = new Error('rollback');
  await tenantLogin
    .begin(async (tx) => {
      await tx`select set_config('svc.tenant_id', ${tenant}, true), set_config('role', ${APP_ROLE}, true)`;
      for (const [name, sql] of Object.entries(statements)) counts[name] = (await tx.unsafe<[{ n: number }]>(sql))[0].n;
      throw rollback;
    })
    .catch((error) => {
      if (error !== rollback) throw error;
    });
  return counts;
}

describe('published views', () => {
  it('are security_invoker views', async () => {
    const rows = await owner<{ view: string; options: string[] | null }[]>`
      select c.relname as view, c.reloptions as options from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'v' and c.relname = any(${Object.keys(VIEWS)})`;
    expect(rows.map((r) => r.view).sort()).toEqual(Object.keys(VIEWS).sort());
    expect(rows.filter((r) => !r.options?.includes('security_invoker=true')).map((r) => r.view)).toEqual([]);
  });

  it("show a tenant the rows it sees in the table and none of another tenant's", async () => {
    const statements = Object.fromEntries(
      Object.entries(VIEWS).flatMap(([view, { table, tenant }]) => [
        [`${view}`, `select count(*)::int as n from ${view}`],
        [`${view} table`, `select count(*)::int as n from ${table}`],
        [`${view} other`, `select count(*)::int as n from ${view} where ${tenant} = '${view === 'user_directory' ? globexUser : globex}'`],
      ]),
    );
    const counts = await countsAs(acme, statements);
    for (const view of Object.keys(VIEWS)) {
      expect(counts[view], view).toBeGreaterThan(0);
      expect(counts[view], view).toBe(counts[`${view} table`]);
      expect(counts[`${view} other`], view).toBe(0);
    }
  });

  it('show no tenant’s rows when no tenant is set', async () => {
    const counts = await countsAs('', Object.fromEntries(Object.keys(VIEWS).map((view) => [view, `select count(*)::int as n from ${view} where ${VIEWS[view as keyof typeof VIEWS].tenant} is not null`])));
    expect(Object.entries(counts).filter(([, n]) => n > 0)).toEqual([]);
  });
});
