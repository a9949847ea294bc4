import { randomBytes, randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import type { DevUser } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';

/** A tenant of one test file's own, with an administrator (`admin`, `tenant-admin`) and a member. */
export interface TenantFixture {
  id: string;
  slug: string;
  admin: DevUser;
  member: DevUser;
}

/**
 * Makes a tenant with the built-in roles, its two users and, when asked, a plan. The users are for the stack's identity provider: pass
 * `devUsers` of every fixture to `startTestStack`.
 */
export async function createTenantFixture(
  sql: postgres.Sql,
  prefix: string,
  options: { plan?: 'free' | 'team' | 'enterprise' } = {},
): Promise<TenantFixture> {
  const slug = `${prefix}-${randomBytes(4).toString('hex')}`;
  const [tenant] = await sql<{ id: string }[]>`
    insert into tenants (slug, name, home_region, plan) values (${slug}, ${slug}, 'eu', ${options.plan ?? null}) returning id::text as id`;
  const id = tenant!.id;
  for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
    await sql`insert into roles (tenant_id, name, permissions) values (${id}::uuid, ${name}, ${permissions as string[]})`;
  }
  const admin = { sub: randomUUID(), email: `admin-${slug}@fixture.test`, name: `Admin ${slug}`, tenant: slug };
  const member = { sub: randomUUID(), email: `member-${slug}@fixture.test`, name: `Member ${slug}`, tenant: slug };
  for (const [user, roles] of [[admin, ['admin', 'tenant-admin']], [member, ['member']]] as const) {
    const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${id}::uuid, ${row!.id}::uuid, ${roles})`;
  }
  return { id, slug, admin, member };
}

/** Gives the tenant the example workflows of the seeded `acme` tenant (a started stack has seeded it). */
export async function copyExampleWorkflows(sql: postgres.Sql, tenantId: string): Promise<void> {
  await sql`
    insert into workflow_definitions (tenant_id, id, name, description, version, steps)
    select ${tenantId}::uuid, d.id, d.name, d.description, d.version, d.steps
    from workflow_definitions d join tenants t on t.id = d.tenant_id where t.slug = 'acme'
    on conflict do nothing`;
}

/**
 * A tenant of a test file's own with the default roles, and users of the given roles there,
 * written straight into the run's database: the users go to the stack's identity provider.
 */
export async function createTenantWithUsers(
  sql: postgres.Sql,
  options: { slug: string; plan?: 'free' | 'team' | 'enterprise'; users: Record<string, readonly string[]> },
): Promise<{ tenantId: string; users: Record<string, DevUser> }> {
  const [tenant] = await sql<{ id: string }[]>`
    insert into tenants (slug, name, home_region, plan) values (${options.slug}, ${options.slug}, 'eu', ${options.plan ?? null}) returning id::text as id`;
  const tenantId = tenant!.id;
  for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
    await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
  }
  const users: Record<string, DevUser> = {};
  for (const [label, roles] of Object.entries(options.users)) {
    const user = { sub: randomUUID(), email: `${label}-${options.slug}@fixture.test`, name: `${label} of ${options.slug}`, tenant: options.slug };
    const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${row!.id}::uuid, ${roles as string[]})`;
    users[label] = user;
  }
  return { tenantId, users };
}

/** An active tenant row with `slug`, written straight into the database (tests of the control plane's own services); answers its id. */
export async function insertActiveTenant(sql: postgres.Sql, slug: string): Promise<string> {
  const [tenant] = await sql<{ id: string }[]>`
    insert into tenants (slug, name, domains, usecase, starter_template, home_region, status)
    values (${slug}, ${slug}, '{}', 'generic', 'blank-vertical-template', 'eu', 'active') returning id::text as id`;
  return tenant!.id;
}

/** A user row named after `label` (its subject and email), written straight into the database; answers its id. */
export async function insertUser(sql: postgres.Sql, label: string): Promise<string> {
  const [user] = await sql<{ id: string }[]>`insert into users (subject, email, name) values (${label}, ${`${label}@example.test`}, ${label}) returning id::text as id`;
  return user!.id;
}
