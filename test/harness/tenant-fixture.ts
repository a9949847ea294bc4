import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import type { DevUser } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/identity/permissions.ts';

/**
 * A tenant of a test file's own, written straight into the run's database (with the default
 * roles), and its users with their roles there: the users go to the stack's identity provider.
 */
export async function createTenantFixture(
  sql: Sql,
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
