import type { Tx } from '../db/client.ts';
import type { Me } from './identity.schema.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';

export interface MembershipRow {
  tenantId: string;
  tenantSlug: string;
  roles: string[];
  permissions: string[];
}

export interface UserRow {
  id: string;
  email: string;
  platformRoles: string[];
}

export async function findUserBySubject(tx: Tx, subject: string): Promise<(UserRow & { lastLoginAt: Date | null }) | undefined> {
  const rows = await tx<(UserRow & { lastLoginAt: Date | null })[]>`
    select id::text as id, email, platform_roles as "platformRoles", last_login_at as "lastLoginAt" from users where subject = ${subject}`;
  return rows[0];
}

/** Binds a token subject to a user provisioned ahead by email (seeded or invited) who has not signed in yet. */
export async function claimUserByEmail(tx: Tx, email: string, subject: string): Promise<UserRow | undefined> {
  const rows = await tx<UserRow[]>`
    update users set subject = ${subject}, updated_at = date_trunc('milliseconds', now())
    where lower(email) = lower(${email}) and subject is null
    returning id::text as id, email, platform_roles as "platformRoles"`;
  return rows[0];
}

/** Whether the user with `email` has not signed in yet (provisioned ahead); undefined when there is none. */
export async function awaitsFirstSignIn(tx: Tx, email: string): Promise<boolean | undefined> {
  const rows = await tx<{ unclaimed: boolean }[]>`select subject is null as unclaimed from users where lower(email) = lower(${email})`;
  return rows[0]?.unclaimed;
}

/**
 * Creates the user of a new token subject. Undefined when the row was not created: the subject
 * was provisioned meanwhile (by a concurrent first call), or another user has the e-mail address.
 */
export async function insertUser(tx: Tx, user: { subject: string; email: string; name: string }): Promise<UserRow | undefined> {
  const rows = await tx<UserRow[]>`
    insert into users (subject, email, name) values (${user.subject}, ${user.email}, ${user.name})
    on conflict do nothing
    returning id::text as id, email, platform_roles as "platformRoles"`;
  return rows[0];
}

export async function recordLogin(tx: Tx, userId: string, at: Date, picture?: string): Promise<void> {
  await tx`
    update users set last_login_at = ${at}, avatar = coalesce(${picture ?? null}::text, avatar)
    where id = ${userId}::uuid and (last_login_at is null or last_login_at < ${at})`;
}

/** Active memberships in live tenants, with the union of the permissions their roles grant. */
export async function listActiveMemberships(tx: Tx, userId: string): Promise<MembershipRow[]> {
  return tx<MembershipRow[]>`
    select m.tenant_id::text as "tenantId", t.slug as "tenantSlug", m.roles,
      array(select distinct p from roles r, unnest(r.permissions) p
            where r.tenant_id = m.tenant_id and r.name = any(m.roles) order by p) as permissions
    from tenant_members m join tenant_directory t on t.id = m.tenant_id
    where m.user_id = ${userId}::uuid and m.status = 'active' and t.deleted_at is null and t.status = 'active'
    order by m.created_at, t.slug`;
}

export async function findMe(tx: Tx, userId: string): Promise<Me | undefined> {
  const rows = await tx.unsafe<Me[]>(
    `select id::text as id, email, name, avatar, status, preferences, platform_roles as "platformRoles",
       ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('last_login_at')} as "lastLoginAt"
     from users where id = $1::uuid`,
    [userId],
    { prepare: true },
  );
  return rows[0];
}

/**
 * The permissions a user's active membership grants in a tenant that is not deleted, whatever its
 * lifecycle status; `undefined` without such a membership.
 */
export async function membershipPermissions(tx: Tx, userId: string, tenantId: string): Promise<string[] | undefined> {
  const rows = await tx<{ permissions: string[] }[]>`
    select array(select distinct p from roles r, unnest(r.permissions) p
                 where r.tenant_id = m.tenant_id and r.name = any(m.roles) order by p) as permissions
    from tenant_members m join tenant_directory t on t.id = m.tenant_id
    where m.user_id = ${userId}::uuid and m.tenant_id = ${tenantId}::uuid and m.status = 'active' and t.deleted_at is null`;
  return rows[0]?.permissions;
}

/**
 * Of these (tenant, user) pairs, those whose user holds `permission` through an active membership
 * of an active tenant that is not deleted: what resolving the user as an actor there would grant.
 */
export async function holdersOf(tx: Tx, pairs: Array<{ tenantId: string; userId: string }>, permission: string): Promise<Array<{ tenantId: string; userId: string }>> {
  if (pairs.length === 0) return [];
  return tx<Array<{ tenantId: string; userId: string }>>`
    select p.tenant_id::text as "tenantId", p.user_id::text as "userId"
    from unnest(${pairs.map((p) => p.tenantId)}::uuid[], ${pairs.map((p) => p.userId)}::uuid[]) as p (tenant_id, user_id)
    where exists (
      select 1 from tenant_members m join tenant_directory t on t.id = m.tenant_id join roles r on r.tenant_id = m.tenant_id and r.name = any(m.roles)
      where m.tenant_id = p.tenant_id and m.user_id = p.user_id and m.status = 'active' and t.deleted_at is null and t.status = 'active'
        and ${permission} = any(r.permissions))`;
}

export async function updateUserProfile(tx: Tx, id: string, changes: { name?: string; preferences?: Record<string, unknown> }): Promise<void> {
  await tx.unsafe(
    `update users set name = coalesce($2, name), preferences = coalesce($3::text::jsonb, preferences), updated_at = ${NOW_MS} where id = $1::uuid`,
    [id, changes.name ?? null, changes.preferences ? JSON.stringify(changes.preferences) : null],
    { prepare: true },
  );
}

/** The user's preferences, its row locked until the transaction ends. */
export async function lockUserPreferences(tx: Tx, id: string): Promise<Record<string, unknown> | undefined> {
  const rows = await tx<{ preferences: Record<string, unknown> }[]>`select preferences from users where id = ${id}::uuid for update`;
  return rows[0]?.preferences;
}
