import type { Tx } from '../db/client.ts';
import type { CreateRootTenantInput, HOME_REGIONS, Membership, PlatformUser, Tenant, TenantMembership } from './tenants.schema.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';


const TENANT_COLUMNS = `id::text as id, slug, name, parent_id::text as "parentId", domains, usecase, industry,
  starter_template as "starterTemplate", home_region as "homeRegion", status, status_reason as "statusReason",
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;
const MEMBERSHIP_COLUMNS = `tenant_id::text as "tenantId", user_id::text as "userId", roles, status, ${isoTimestamp('created_at')} as "createdAt",
  ${isoTimestamp('invitation_expires_at')} as "expiresAt"`;
const USER_COLUMNS = `id::text as id, email, name, status, ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('last_login_at')} as "lastLoginAt"`;

export type NewTenant = Omit<CreateRootTenantInput, 'homeRegion'> & { homeRegion: (typeof HOME_REGIONS)[number]; parentId: string | null };

/** Inserts a tenant in status `provisioning`; a taken slug fails with the `tenants_slug_key` violation. */
export async function insertTenant(tx: Tx, tenant: NewTenant): Promise<Tenant> {
  const rows = await tx.unsafe<Tenant[]>(
    `insert into tenants (slug, name, parent_id, domains, usecase, industry, starter_template, home_region, status)
     values ($1, $2, $3::uuid, $4::text[], $5, $6, $7, $8, 'provisioning')
     returning ${TENANT_COLUMNS}`,
    [tenant.slug, tenant.name, tenant.parentId, tenant.domains as never, tenant.usecase, tenant.industry ?? null, tenant.starterTemplate, tenant.homeRegion],
    { prepare: true },
  );
  return rows[0]!;
}

/** A tenant that is not deleted, by id or slug. */
export async function findTenant(tx: Tx, ref: string): Promise<Tenant | undefined> {
  const byId = UUID.test(ref);
  const rows = await tx.unsafe<Tenant[]>(
    `select ${TENANT_COLUMNS} from tenants where ${byId ? 'id = $1::uuid' : 'slug = $1'} and deleted_at is null`,
    [byId ? ref.toLowerCase() : ref],
    { prepare: true },
  );
  return rows[0];
}

/** Sets the fields a tenant's declaration may change after creation; true when anything changed. */
export async function updateTenantProfile(
  tx: Tx,
  id: string,
  profile: { name: string; domains: string[]; usecase: string; industry: string | null },
): Promise<boolean> {
  const rows = await tx.unsafe(
    `update tenants set name = $2, domains = $3::text[], usecase = $4, industry = $5, updated_at = ${NOW_MS}
     where id = $1::uuid and deleted_at is null
       and (name, domains, usecase, industry) is distinct from ($2, $3::text[], $4, $5)
     returning id`,
    [id, profile.name, profile.domains as never, profile.usecase, profile.industry],
    { prepare: true },
  );
  return rows.length > 0;
}

/** Moves a tenant out of `provisioning`; a tenant in any other status (deleted included) is left as it is. */
export async function finishProvisioning(tx: Tx, id: string, status: 'active' | 'failed', reason: string | null): Promise<void> {
  await tx`
    update tenants set status = ${status}, status_reason = ${reason}, updated_at = date_trunc('milliseconds', now())
    where id = ${id}::uuid and status = 'provisioning' and deleted_at is null`;
}

/**
 * Puts a tenant whose provisioning the workflow engine did not accept (`failed` for `reason`) back
 * into `provisioning`, for another start; whether it did.
 */
export async function reopenProvisioning(tx: Tx, id: string, reason: string): Promise<boolean> {
  const rows = await tx`
    update tenants set status = 'provisioning', status_reason = null, updated_at = date_trunc('milliseconds', now())
    where id = ${id}::uuid and status = 'failed' and status_reason = ${reason} and deleted_at is null
    returning id`;
  return rows.length > 0;
}

/** Platform work: sets a live tenant's plan; false for no such tenant. */
export async function setTenantPlan(tx: Tx, id: string, plan: string): Promise<boolean> {
  return (await tx`update tenants set plan = ${plan}, updated_at = now() where id = ${id}::uuid and deleted_at is null returning 1`).length > 0;
}

/** Platform work: the tenant with this slug, inserted as given when there is none; its id. */
export async function ensureTenantBySlug(tx: Tx, tenant: { slug: string; name: string; homeRegion: string }): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into tenants (slug, name, home_region) values (${tenant.slug}, ${tenant.name}, ${tenant.homeRegion})
    on conflict (slug) do update set updated_at = tenants.updated_at
    returning id::text as id`;
  return row!.id;
}

export async function softDeleteTenant(tx: Tx, id: string): Promise<void> {
  await tx`update tenants set status = 'deleted', deleted_at = date_trunc('milliseconds', now()), updated_at = date_trunc('milliseconds', now()) where id = ${id}::uuid and deleted_at is null`;
}

/** Whether `tenantId` is `ancestorId` or a live tenant below it. */
export async function isWithin(tx: Tx, tenantId: string, ancestorId: string): Promise<boolean> {
  const [row] = await tx<{ within: boolean }[]>`
    with recursive chain (id, parent_id) as (
      select id, parent_id from tenants where id = ${tenantId}::uuid and deleted_at is null
      union all
      select t.id, t.parent_id from tenants t join chain c on t.id = c.parent_id where t.deleted_at is null
    )
    select exists (select 1 from chain where id = ${ancestorId}::uuid) as within`;
  return row?.within ?? false;
}

export async function countLiveChildren(tx: Tx, id: string): Promise<number> {
  const [row] = await tx<{ count: number }[]>`select count(*)::int as count from tenants where parent_id = ${id}::uuid and deleted_at is null`;
  return row?.count ?? 0;
}

/**
 * A user's active memberships in tenants that are not deleted, whatever their lifecycle status
 * (a tenant still provisioning is listed, so a client can wait for it), oldest first.
 */
export async function listMemberships(tx: Tx, userId: string): Promise<TenantMembership[]> {
  return tx<TenantMembership[]>`
    select t.id::text as id, t.slug, t.name, t.status, t.status_reason as "statusReason",
      t.parent_id::text as "parentId", t.home_region as "homeRegion", m.roles
    from memberships m join tenants t on t.id = m.tenant_id
    where m.user_id = ${userId}::uuid and m.status = 'active' and t.deleted_at is null
    order by m.created_at, t.slug`;
}


/**
 * Adds a membership with `roles` unless one exists, `active` or, for an invitation the user has
 * still to accept, `invited` until `invitationTtlMs` from now; an existing membership is returned
 * unchanged, but for an invitation made again, which is renewed for `invitationTtlMs`.
 */
export async function ensureMembership(
  tx: Tx,
  tenantId: string,
  userId: string,
  roles: string[],
  invitation?: { ttlMs: number },
): Promise<{ membership: Membership; created: boolean }> {
  const rows = await tx.unsafe<(Membership & { created: boolean })[]>(
    `insert into memberships (tenant_id, user_id, roles, status, invitation_expires_at)
     values ($1::uuid, $2::uuid, $3::text[], $4, now() + make_interval(secs => $5::float8 / 1000))
     on conflict (tenant_id, user_id) do update set roles = memberships.roles,
       invitation_expires_at = case when memberships.status = 'invited' and excluded.status = 'invited' then excluded.invitation_expires_at
                                    else memberships.invitation_expires_at end
     returning ${MEMBERSHIP_COLUMNS}, (xmax = 0) as created`,
    [tenantId, userId, roles as never, invitation ? 'invited' : 'active', invitation ? invitation.ttlMs : null],
    { prepare: true },
  );
  const { created, ...membership } = rows[0]!;
  return { membership, created };
}

/** The user's invitation to a tenant: until when it can be accepted, and whether that time has passed; undefined when there is none. */
export async function findInvitation(tx: Tx, tenantId: string, userId: string): Promise<{ expiresAt: string; expired: boolean } | undefined> {
  const rows = await tx<{ expiresAt: string; expired: boolean }[]>`
    select ${tx.unsafe(isoTimestamp('invitation_expires_at'))} as "expiresAt", invitation_expires_at <= now() as expired
    from memberships where tenant_id = ${tenantId}::uuid and user_id = ${userId}::uuid and status = 'invited'`;
  return rows[0];
}

/** Makes the user's invitation to a tenant an active membership (expired or not: the caller decides); undefined when there is none. */
export async function acceptInvitation(tx: Tx, tenantId: string, userId: string): Promise<Membership | undefined> {
  const rows = await tx.unsafe<Membership[]>(
    `update memberships set status = 'active', invitation_expires_at = null where tenant_id = $1::uuid and user_id = $2::uuid and status = 'invited'
     returning ${MEMBERSHIP_COLUMNS}`,
    [tenantId, userId],
  );
  return rows[0];
}

/** Deletes the user's invitation to a tenant (the user declined it); false when there was none. */
export async function deleteInvitation(tx: Tx, tenantId: string, userId: string): Promise<boolean> {
  return (await tx`delete from memberships where tenant_id = ${tenantId}::uuid and user_id = ${userId}::uuid and status = 'invited' returning 1`).length > 0;
}

/**
 * Deletes the user's membership of a tenant (or invitation to it), unless that leaves the tenant
 * without an active `adminRole`: then nothing changes and the answer says so. The tenant's
 * administrators' rows are locked first, so that two administrators removing each other take turns.
 */
export async function deleteMembership(tx: Tx, tenantId: string, userId: string, adminRole: string): Promise<'removed' | 'not-found' | 'last-admin'> {
  const admins = await tx<{ userId: string }[]>`
    select user_id::text as "userId" from memberships where tenant_id = ${tenantId}::uuid and status = 'active' and ${adminRole} = any(roles) for update`;
  if (admins.length === 1 && admins[0]!.userId === userId) return 'last-admin';
  const removed = await tx`delete from memberships where tenant_id = ${tenantId}::uuid and user_id = ${userId}::uuid returning 1`;
  return removed.length > 0 ? 'removed' : 'not-found';
}

/** Adds `roles` to the user's membership (creating it, or making it active again). */
export async function grantRoles(tx: Tx, tenantId: string, userId: string, roles: string[]): Promise<{ membership: Membership; created: boolean }> {
  const rows = await tx.unsafe<(Membership & { created: boolean })[]>(
    `insert into memberships (tenant_id, user_id, roles) values ($1::uuid, $2::uuid, $3::text[])
     on conflict (tenant_id, user_id) do update
       set roles = memberships.roles || array(select r from unnest(excluded.roles) r where r <> all(memberships.roles)), status = 'active',
           invitation_expires_at = null
     returning ${MEMBERSHIP_COLUMNS}, (xmax = 0) as created`,
    [tenantId, userId, roles as never],
    { prepare: true },
  );
  const { created, ...membership } = rows[0]!;
  return { membership, created };
}

export async function findUserByEmail(tx: Tx, email: string): Promise<PlatformUser | undefined> {
  const rows = await tx.unsafe<PlatformUser[]>(`select ${USER_COLUMNS} from user_directory where lower(email) = lower($1)`, [email], { prepare: true });
  return rows[0];
}

export async function findUserById(tx: Tx, id: string): Promise<PlatformUser | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<PlatformUser[]>(`select ${USER_COLUMNS} from user_directory where id = $1::uuid`, [id], { prepare: true });
  return rows[0];
}
