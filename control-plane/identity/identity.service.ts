import type { Db, Tx } from '../db/client.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { mergePatch } from '../json/merge-patch.ts';
import {
  awaitsFirstSignIn,
  claimUserByEmail,
  findMe,
  findUserBySubject,
  holdersOf,
  insertUser,
  listActiveMemberships,
  lockUserPreferences,
  membershipPermissions,
  recordLogin,
  updateUserProfile,
  type MembershipRow,
  type UserRow,
} from './identity.repo.ts';
import { ensureDefaultRoles } from './default-roles.ts';
import { APP_TOKEN_ELSEWHERE, type Actor, type Identity, type Me, type Principal, type ProfileChanges, type UpdateProfileInput } from './identity.schema.ts';
import { platformPermissionsOf, type Permission } from '../auth/permissions.ts';
import { UUID } from '../ids.ts';


export type IdentityService = ReturnType<typeof createIdentityService>;

/**
 * Turns a verified token identity into an Actor in one tenant. Users are provisioned just in time
 * on their first call (matched by email to a user provisioned ahead, else created), and
 * `lastLoginAt` moves to the token's issue time whenever a newer token is seen. Resolved actors
 * are cached for `cacheTtlMs` per token, so a membership change takes effect within that time
 * (at once in this process for a deleted tenant: see `forgetTenant`). Also what other domains ask
 * of identity: a user's memberships and the permissions they grant, the tenants' built-in roles,
 * and the user's profile (one record per user, which v4 `me` and v3 users both change).
 */
export function createIdentityService(deps: {
  db: Db;
  /** The tenant that registered the app a client id belongs to; undefined for the platform's own clients. */
  appClientTenant?: (clientId: string) => Promise<string | undefined>;
  cacheTtlMs?: number;
  now?: () => number;
}) {
  const { db } = deps;
  const ttl = deps.cacheTtlMs ?? 5_000;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { actor: Actor; expires: number }>();
  const principals = new Map<string, { principal: Principal; expires: number }>();
  const appTenants = new Map<string, { tenantId: string | undefined; expires: number }>();

  /** The tenant a token is bound to: the one that registered the app it was issued to, if any. */
  async function appTenantOf(identity: Identity): Promise<string | undefined> {
    if (!identity.clientId || !deps.appClientTenant) return undefined;
    const hit = appTenants.get(identity.clientId);
    if (hit && hit.expires > now()) return hit.tenantId;
    const tenantId = await deps.appClientTenant(identity.clientId);
    if (appTenants.size > 10_000) appTenants.clear();
    appTenants.set(identity.clientId, { tenantId, expires: now() + ttl });
    return tenantId;
  }

  /** The token's user, provisioned just in time, with the sign-in time recorded. */
  async function provisionUser(tx: Tx, identity: Identity): Promise<UserRow> {
    let found = await findUserBySubject(tx, identity.sub);
    if (!found) {
      if (!identity.email) throw new UnauthorizedError('token carries no email to provision the user from');
      // A user provisioned ahead is bound only to a token that vouches for the address: anyone can
      // put an unverified address in their account at some identity providers.
      const provisioned =
        (identity.emailVerified === true ? await claimUserByEmail(tx, identity.email, identity.sub) : undefined) ??
        (await insertUser(tx, { subject: identity.sub, email: identity.email, name: identity.name ?? identity.email }));
      if (provisioned) found = { ...provisioned, lastLoginAt: null };
      else {
        found = await findUserBySubject(tx, identity.sub);
        if (!found) {
          if (await awaitsFirstSignIn(tx, identity.email)) {
            throw new ForbiddenError(`the email address ${identity.email} is of a user provisioned ahead, whom only a token saying the address is verified (email_verified) signs in as`);
          }
          throw new ForbiddenError(`another account uses the email address ${identity.email}`);
        }
      }
    }
    const issuedAt = identity.issuedAt ? new Date(identity.issuedAt * 1000) : new Date(now());
    // A newer token's picture becomes the avatar; a token without one leaves it as it is.
    if (!found.lastLoginAt || found.lastLoginAt < issuedAt) await recordLogin(tx, found.id, issuedAt, identity.picture);
    return found;
  }

  async function resolve(identity: Identity, tenantHint: string | undefined): Promise<Actor> {
    const { user, memberships } = await db.system(async (tx) => {
      const found = await provisionUser(tx, identity);
      return { user: found, memberships: await listActiveMemberships(tx, found.id) };
    });

    const appTenant = await appTenantOf(identity);
    const wanted = tenantHint ?? appTenant ?? identity.tenant;
    const membership = wanted
      ? memberships.find((m) => (UUID.test(wanted) ? m.tenantId === wanted.toLowerCase() : m.tenantSlug === wanted))
      : memberships[0];
    if (!membership) throw new ForbiddenError(wanted ? `no active membership in tenant "${wanted}"` : 'no active tenant membership');
    if (appTenant && membership.tenantId !== appTenant) throw new ForbiddenError(APP_TOKEN_ELSEWHERE);
    return {
      userId: user.id,
      email: user.email,
      tenantId: membership.tenantId,
      tenantSlug: membership.tenantSlug,
      roles: membership.roles,
      permissions: new Set(membership.permissions),
    };
  }

  /**
   * Sets the user's `name` and deep-merges `preferences` into the stored ones, in the caller's
   * transaction `tx`: the user's row is locked first, and stays locked until `tx` ends; `check`
   * runs under that lock, before anything changes, and refuses the change by throwing.
   */
  async function changeProfile(tx: Tx, userId: string, changes: ProfileChanges, check?: () => Promise<void>): Promise<void> {
    const stored = changes.preferences || check ? await lockUserPreferences(tx, userId) : undefined;
    await check?.();
    const preferences = changes.preferences ? (mergePatch(stored ?? {}, changes.preferences) as Record<string, unknown>) : undefined;
    await updateUserProfile(tx, userId, { name: changes.name, preferences });
  }

  return {
    async resolveActor(identity: Identity, tenantHint?: string): Promise<Actor> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}|${identity.clientId ?? ''}|${tenantHint ?? identity.tenant ?? ''}`;
      const hit = cache.get(key);
      if (hit && hit.expires > now()) return hit.actor;
      const actor = await resolve(identity, tenantHint);
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { actor, expires: now() + ttl });
      return actor;
    },

    /** The token's user without choosing a tenant, with the platform permissions of their platform roles. */
    async resolveUser(identity: Identity): Promise<Principal> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}|${identity.clientId ?? ''}`;
      const hit = principals.get(key);
      if (hit && hit.expires > now()) return hit.principal;
      const user = await db.system((tx) => provisionUser(tx, identity));
      const appTenantId = await appTenantOf(identity);
      // An app's token never carries the user's platform roles: the app acts in its tenant alone.
      const platformRoles = appTenantId ? [] : user.platformRoles;
      const principal: Principal = {
        userId: user.id,
        email: user.email,
        ...(identity.emailVerified === true && identity.email ? { verifiedEmail: identity.email } : {}),
        platformRoles,
        platformPermissions: platformPermissionsOf(platformRoles),
        ...(appTenantId ? { appTenantId } : {}),
      };
      if (principals.size > 10_000) principals.clear();
      principals.set(key, { principal, expires: now() + ttl });
      return principal;
    },

    /** Drops cached actors of a tenant, so that a deleted tenant stops resolving at once in this process. */
    forgetTenant(tenantId: string): void {
      for (const [key, entry] of cache) if (entry.actor.tenantId === tenantId) cache.delete(key);
    },

    async me(principal: Principal): Promise<Me> {
      const me = await db.system((tx) => findMe(tx, principal.userId));
      if (!me) throw new NotFoundError('user');
      return principal.appTenantId ? { ...me, platformRoles: principal.platformRoles } : me;
    },

    /** Changes the caller's `name` and deep-merges `preferences`; returns the whole record. */
    async updateProfile(principal: Principal, input: UpdateProfileInput): Promise<Me> {
      return db.system(async (tx) => {
        await changeProfile(tx, principal.userId, input);
        const me = await findMe(tx, principal.userId);
        if (!me) throw new NotFoundError('user');
        return me;
      });
    },

    changeProfile,

    /** The user's active memberships in active tenants, each with the permissions its roles grant. */
    async activeMemberships(userId: string): Promise<MembershipRow[]> {
      return db.system((tx) => listActiveMemberships(tx, userId));
    },

    /**
     * The permissions the user's active membership grants in a tenant that is not deleted, whatever
     * its lifecycle status; `undefined` without such a membership.
     */
    async permissionsIn(userId: string, tenantId: string): Promise<string[] | undefined> {
      return db.system((tx) => membershipPermissions(tx, userId, tenantId));
    },

    /** Of these (tenant, user) pairs, those whose user may act in the tenant with `permission` now: one query for all. */
    async holding(pairs: Array<{ tenantId: string; userId: string }>, permission: Permission): Promise<Array<{ tenantId: string; userId: string }>> {
      return db.system((tx) => holdersOf(tx, pairs, permission));
    },

    /** Gives a tenant the built-in roles with the built-in permissions, in the caller's transaction `tx`; idempotent. */
    async ensureDefaultRoles(tx: Tx, tenantId: string): Promise<void> {
      await ensureDefaultRoles(tx, tenantId);
    },
  };
}
