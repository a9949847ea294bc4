import type { Db } from '../db/client.ts';
import { ensureDefaultRoles } from './default-roles.ts';

interface SeedUser {
  email: string;
  name: string;
  tenant: string;
  roles: string[];
}

/** Development tenants and users; the built-in identity provider signs these users in. */
export const DEV_TENANTS = [
  { slug: 'acme', name: 'Acme Corporation', homeRegion: 'au' },
  { slug: 'globex', name: 'Globex Corporation', homeRegion: 'eu' },
] as const;

export const DEV_SEED_USERS: readonly SeedUser[] = [
  { email: 'admin@acme.test', name: 'Acme Admin', tenant: 'acme', roles: ['admin', 'tenant-admin'] },
  { email: 'member@acme.test', name: 'Acme Member', tenant: 'acme', roles: ['member'] },
  { email: 'admin@globex.test', name: 'Globex Admin', tenant: 'globex', roles: ['admin', 'tenant-admin'] },
];

/** Development users with platform roles and no tenant: `platform-admin` may create root tenants. */
export const DEV_PLATFORM_USERS = [{ email: 'platform@svc.test', name: 'Platform Admin', platformRoles: ['platform-admin'] }] as const;

/** Seeds the development tenants, their roles, users, memberships and platform roles. Idempotent; returns tenant ids by slug. */
export async function seedDevelopmentData(db: Db): Promise<Map<string, string>> {
  return db.system(async (tx) => {
    const tenantIds = new Map<string, string>();
    for (const tenant of DEV_TENANTS) {
      const [row] = await tx<{ id: string }[]>`
        insert into tenants (slug, name, home_region) values (${tenant.slug}, ${tenant.name}, ${tenant.homeRegion})
        on conflict (slug) do update set updated_at = tenants.updated_at
        returning id::text as id`;
      tenantIds.set(tenant.slug, row!.id);
      await ensureDefaultRoles(tx, row!.id);
    }
    for (const user of DEV_SEED_USERS) {
      const [row] = await tx<{ id: string }[]>`
        insert into users (email, name) values (${user.email}, ${user.name})
        on conflict (lower(email)) do update set updated_at = users.updated_at
        returning id::text as id`;
      await tx`insert into memberships (tenant_id, user_id, roles) values (${tenantIds.get(user.tenant)!}::uuid, ${row!.id}::uuid, ${user.roles})
               on conflict (tenant_id, user_id) do nothing`;
    }
    for (const user of DEV_PLATFORM_USERS) {
      await tx`insert into users (email, name, platform_roles) values (${user.email}, ${user.name}, ${user.platformRoles})
               on conflict (lower(email)) do update
               set platform_roles = users.platform_roles || array(select r from unnest(excluded.platform_roles) r where r <> all(users.platform_roles))`;
    }
    return tenantIds;
  });
}
