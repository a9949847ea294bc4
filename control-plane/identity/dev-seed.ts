import type { Db, Tx } from '../db/client.ts';
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

/** What the seed asks of the tenants domain, which owns tenants and memberships; each call idempotent. */
export interface DevelopmentTenants {
  /** The tenant with this slug, created when missing; its id. */
  ensure(tx: Tx, tenant: { slug: string; name: string; homeRegion: string }): Promise<string>;
  /** Makes the user a member with `roles` unless they are one already. */
  addMember(tx: Tx, tenantId: string, userId: string, roles: string[]): Promise<void>;
}

/** Seeds the development tenants, their roles, users, memberships and platform roles. Idempotent; returns tenant ids by slug. */
export async function seedDevelopmentData(db: Db, tenants: DevelopmentTenants): Promise<Map<string, string>> {
  return db.system(async (tx) => {
    const tenantIds = new Map<string, string>();
    for (const tenant of DEV_TENANTS) {
      const id = await tenants.ensure(tx, tenant);
      tenantIds.set(tenant.slug, id);
      await ensureDefaultRoles(tx, id);
    }
    for (const user of DEV_SEED_USERS) {
      const [row] = await tx<{ id: string }[]>`
        insert into users (email, name) values (${user.email}, ${user.name})
        on conflict (lower(email)) do update set updated_at = users.updated_at
        returning id::text as id`;
      await tenants.addMember(tx, tenantIds.get(user.tenant)!, row!.id, [...user.roles]);
    }
    for (const user of DEV_PLATFORM_USERS) {
      await tx`insert into users (email, name, platform_roles) values (${user.email}, ${user.name}, ${user.platformRoles})
               on conflict (lower(email)) do update
               set platform_roles = users.platform_roles || array(select r from unnest(excluded.platform_roles) r where r <> all(users.platform_roles))`;
    }
    return tenantIds;
  });
}
