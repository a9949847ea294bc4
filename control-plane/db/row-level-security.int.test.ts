import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { APP_ROLE } from './client.ts';
import { migrate } from '../app/migrate.ts';

/**
 * Row-level security against the run's real PostgreSQL: every tenant table has it enabled and
 * forced (found in the catalog, so a table added later is held to it), the role tenant requests
 * run as cannot get around it, and the tables' owner, when it is not a superuser (as in
 * production), sees one tenant whenever a tenant is set.
 */
const owner = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
const tenantLogin = postgres(inject('tenantDatabaseUrl'), { max: 1, onnotice: () => {}, connection: { role: APP_ROLE } });
afterAll(async () => {
  await tenantLogin.end({ timeout: 5 });
  await owner.end({ timeout: 5 });
});

/** Tables of the public schema with a tenant_id column, or with row-level security. */
const tenantTables = (sql: postgres.Sql) => sql<{ table: string; enabled: boolean; forced: boolean; owner: string; policies: string[] }[]>`
  select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced, pg_get_userbyid(c.relowner) as owner,
         array(select p.polname::text from pg_policy p where p.polrelid = c.oid order by 1) as policies
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relkind in ('r', 'p')
    and (c.relrowsecurity or exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped))
  order by 1`;

/** Two tenants of this file's own, each with a resource. */
const tenantsAndRows = (() => {
  let made: Promise<{ acme: string; globex: string }> | undefined;
  return () =>
    (made ??= (async () => {
      const suffix = randomBytes(4).toString('hex');
      const [acme, globex] = [randomUUID(), randomUUID()];
      await owner`insert into tenants (id, slug, name) values (${acme}, ${`rls-a-${suffix}`}, 'RLS A'), (${globex}, ${`rls-b-${suffix}`}, 'RLS B')`;
      await owner`insert into resources (tenant_id, type, data) values (${acme}, 'project', '{"name":"a"}'), (${globex}, 'project', '{"name":"b"}')`;
      return { acme, globex };
    })());
})();

/** Runs `fn` in a transaction of the tenant login as svc_app with `tenant` set, as the platform does; always rolled back. */
async function asTenant<T>(tenant: string, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let result: T;
  const rollback = new Error('rollback');
  await tenantLogin
    .begin(async (tx) => {
      await tx`select set_config('svc.tenant_id', ${tenant}, true), set_config('role', ${APP_ROLE}, true)`;
      result = await fn(tx);
      throw rollback;
    })
    .catch((error) => {
      if (error !== rollback) throw error;
    });
  return result!;
}

/** The SQL state of the error `statement` fails with, or 'ok'. */
async function failure(statement: Promise<unknown>): Promise<string> {
  try {
    await statement;
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('row-level security', () => {
  it('is enabled and forced on every table with a tenant_id column, each with a policy on the tenant setting', async () => {
    const tables = await tenantTables(owner);
    expect(tables.map((t) => t.table)).toEqual(expect.arrayContaining(['resources', 'memberships', 'executions', 'capability_overrides', 'tenants', 'users']));
    expect(tables.filter((t) => !t.enabled || !t.forced).map((t) => t.table)).toEqual([]);
    const policies = await owner<{ table: string }[]>`
      select distinct c.relname as table from pg_policy p join pg_class c on c.oid = p.polrelid
      where pg_get_expr(p.polqual, p.polrelid) like '%current_tenant_id()%'`;
    const keyed = new Set(policies.map((p) => p.table));
    expect(tables.filter((t) => !keyed.has(t.table)).map((t) => t.table)).toEqual([]);
    expect(tables.filter((t) => !t.policies.includes('platform_owner')).map((t) => t.table)).toEqual([]);
  });

  it('binds the role tenant requests run as: no superuser, no BYPASSRLS, owns no table, inherits neither', async () => {
    const [who] = await tenantLogin<{ session: string; current: string }[]>`select session_user::text as session, current_user::text as current`;
    expect(who!.current).toBe(APP_ROLE);
    // Every role the login and svc_app are, directly or through membership.
    const roles = await owner<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }[]>`
      with recursive member_of(oid) as (
        select oid from pg_roles where rolname in (${who!.session}, ${APP_ROLE})
        union select m.roleid from pg_auth_members m join member_of on m.member = member_of.oid)
      select r.rolname::text, r.rolsuper, r.rolbypassrls from pg_roles r join member_of using (oid)`;
    expect(roles.filter((r) => r.rolsuper || r.rolbypassrls)).toEqual([]);
    const owners = new Set((await tenantTables(owner)).map((t) => t.owner));
    expect(roles.filter((r) => owners.has(r.rolname))).toEqual([]);
  });

  it('cannot be switched off, got around by changing role, or used to write another tenant’s rows', async () => {
    const { acme, globex } = await tenantsAndRows();
    const owners = [...new Set((await tenantTables(owner)).map((t) => t.owner))];
    const seen = await asTenant(acme, async (tx) => {
      const own = await tx`select tenant_id::text from resources`;
      const [mine] = await tx<{ id: string }[]>`insert into resources (tenant_id, type, data) values (${acme}::uuid, 'project', '{"name":"rls probe"}') returning id::text`;
      const outcomes: Record<string, string> = {};
      // Each attempt in a savepoint, so that one failing leaves the transaction usable for the next.
      const attempt = async (name: string, statement: (sp: postgres.TransactionSql) => Promise<unknown>) => {
        outcomes[name] = await failure(tx.savepoint((sp) => statement(sp)));
      };
      await attempt('set role to the owner', (sp) => sp.unsafe(`set role "${owners[0]}"`));
      await attempt('set session authorization', (sp) => sp.unsafe(`set session authorization "${owners[0]}"`));
      await attempt('disable row level security', (sp) => sp`alter table roles disable row level security`);
      await attempt('no force row level security', (sp) => sp`alter table roles no force row level security`);
      await attempt('drop a policy', (sp) => sp`drop policy tenant_rows on roles`);
      await attempt('create a permissive policy', (sp) => sp`create policy everything on roles using (true)`);
      await attempt('row_security off', (sp) => sp`select set_config('row_security', 'off', true)`.then(() => sp`select 1 from roles`));
      await attempt('insert a row of the other tenant', (sp) => sp`insert into resources (tenant_id, type, data) values (${globex}::uuid, 'project', '{"name":"planted"}')`);
      await attempt('move an own row to the other tenant', (sp) => sp`update resources set tenant_id = ${globex}::uuid where id = ${mine!.id}::uuid`);
      // Back to the login's own role (and to no role at all): still one tenant.
      await tx`reset role`;
      const afterReset = await tx<{ tenant_id: string }[]>`select distinct tenant_id::text from resources`;
      const user = (await tx<{ u: string }[]>`select current_user::text as u`)[0]!.u;
      await tx`set role none`;
      const afterNone = await tx<{ tenant_id: string }[]>`select distinct tenant_id::text from resources`;
      const updatedElsewhere = await tx`update resources set data = '{}' where tenant_id = ${globex}::uuid returning 1`;
      return { own, outcomes, afterReset, afterNone, user, updatedElsewhere };
    });
    expect(new Set(seen.own.map((r) => r.tenant_id))).toEqual(new Set([acme]));
    expect(seen.outcomes).toEqual({
      'set role to the owner': '42501',
      'set session authorization': '42501',
      'disable row level security': '42501',
      'no force row level security': '42501',
      'drop a policy': '42501',
      'create a permissive policy': '42501',
      'row_security off': '42501',
      'insert a row of the other tenant': '42501',
      'move an own row to the other tenant': '42501',
    });
    expect(seen.user).not.toBe(owners[0]);
    expect(seen.afterReset).toEqual([{ tenant_id: acme }]);
    expect(seen.afterNone).toEqual([{ tenant_id: acme }]);
    expect(seen.updatedElsewhere).toHaveLength(0);
  });

  it('shows no tenant’s rows when no tenant is set', async () => {
    await tenantsAndRows();
    const tables = await tenantTables(owner);
    const withTenant = new Set((await owner<{ table: string }[]>`select c.relname as table from pg_attribute a join pg_class c on c.oid = a.attrelid where a.attname = 'tenant_id'`).map((r) => r.table));
    const counts = await tenantLogin.begin(async (tx) => {
      await tx`select set_config('role', ${APP_ROLE}, true)`;
      const visible: Record<string, number> = {};
      for (const { table } of tables) {
        // Built-in rows (tenant_id null: the platform's object types) are every tenant's. A table
        // the role may not read at all (42501: the platform's own, such as realtime_signing_keys) shows nothing either.
        const n = await tx
          .savepoint((sp) => sp.unsafe<[{ n: number }]>(`select count(*)::int as n from "${table}"${withTenant.has(table) ? ' where tenant_id is not null' : ''}`))
          .then(([row]) => row.n)
          .catch((error: { code?: string }) => {
            if (error.code === '42501') return 0;
            throw error;
          });
        if (n) visible[table] = n;
      }
      return visible;
    });
    expect(await owner`select 1 from resources limit 1`).toHaveLength(1);
    expect(counts).toEqual({});
  });
});

/**
 * The tables' owner as production has it: not a superuser. A database of its own is migrated by
 * such a role; the owner then sees every tenant's rows with no tenant set (the platform's own
 * work), one tenant's when one is set, and the one lookup across tenants still answers.
 */
describe('a non-superuser owner', () => {
  it('is bound by the forced policies whenever a tenant is set', { timeout: 120_000 }, async (context) => {
    // Making a role and a database takes the cluster's superuser (the test cluster's; not an outside DATABASE_URL's owner).
    const [admin] = await owner<{ rolsuper: boolean }[]>`select rolsuper from pg_roles where rolname = current_user`;
    if (!admin?.rolsuper) context.skip();
    const role = `svc_owner_${randomBytes(4).toString('hex')}`;
    const database = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    await owner.unsafe(`create role ${role} login nosuperuser nobypassrls createrole`);
    await owner.unsafe(`create database ${database} owner ${role}`);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${database}`;
    const asAdmin = postgres(url.toString(), { max: 1, onnotice: () => {} });
    url.username = role;
    url.password = '';
    const asOwner = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      // Extensions are the cluster superuser's to create, as in production.
      for (const { extname } of await owner<{ extname: string }[]>`select extname from pg_extension where extname <> 'plpgsql'`) await asAdmin.unsafe(`create extension if not exists "${extname}"`);
      await migrate(url.toString());
      const [a, b] = [randomUUID(), randomUUID()];
      const user = randomUUID();
      const loner = randomUUID();
      await asOwner`insert into tenants (id, slug, name) values (${a}, ${`a-${role}`.replace(/_/g, '-')}, 'A'), (${b}, ${`b-${role}`.replace(/_/g, '-')}, 'B')`;
      await asOwner`insert into users (id, email) values (${user}, ${`${role}@x.test`}), (${loner}, ${`${role}-2@x.test`})`;
      await asOwner`insert into memberships (tenant_id, user_id, roles) values (${a}, ${user}, '{member}'), (${b}, ${user}, '{member}'), (${a}, ${loner}, '{member}')`;
      const everyone = await asOwner<{ n: number }[]>`select count(*)::int as n from memberships`;
      const scoped = await asOwner.begin(async (tx) => {
        await tx`select set_config('svc.tenant_id', ${a}, true)`;
        const own = await tx<{ tenant_id: string }[]>`select distinct tenant_id::text from memberships`;
        const tenants = await tx<{ id: string }[]>`select id::text from tenants`;
        const planted = await failure(tx.savepoint((sp) => sp`insert into memberships (tenant_id, user_id) values (${b}, ${loner})`));
        // As a tenant transaction on a connection that logged in as the owner, back to the owner.
        await tx`select set_config('role', ${APP_ROLE}, true)`;
        const elsewhere = await tx<{ user: boolean; loner: boolean }[]>`select user_belongs_elsewhere(${user}) as user, user_belongs_elsewhere(${loner}) as loner`;
        const setting = await tx<{ t: string }[]>`select current_setting('svc.tenant_id') as t`;
        await tx`reset role`;
        const afterReset = await tx<{ tenant_id: string }[]>`select distinct tenant_id::text from memberships`;
        return { own, tenants, planted, elsewhere, setting, afterReset };
      });
      expect(everyone[0]!.n).toBe(3);
      expect(scoped.own).toEqual([{ tenant_id: a }]);
      expect(scoped.tenants).toEqual([{ id: a }]);
      expect(scoped.planted).toBe('42501');
      expect(scoped.elsewhere).toEqual([{ user: true, loner: false }]);
      expect(scoped.setting).toEqual([{ t: a }]);
      expect(scoped.afterReset).toEqual([{ tenant_id: a }]);
      expect((await tenantTables(asOwner)).filter((t) => !t.forced)).toEqual([]);
    } finally {
      await asOwner.end({ timeout: 5 });
      await asAdmin.end({ timeout: 5 });
      await owner.unsafe(`drop database if exists ${database} with (force)`);
      await owner.unsafe(`drop role if exists ${role}`);
    }
  });
});
