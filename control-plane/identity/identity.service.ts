import type { Db, Tx } from '../db/client.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { mergePatch } from '../json/merge-patch.ts';
import type { TenantMembership } from '../tenants/tenants.schema.ts';
import { lockUserPreferences, updateUserProfile } from '../users/users.repo.ts';
import {
  awaitsFirstSignIn,
  claimUserByEmail,
  findMe,
  findUserBySubject,
  insertUser,
  listActiveMemberships,
  listMemberships,
  recordLogin,
  type UserRow,
} from './identity.repo.ts';
import type { Actor, Identity, Me, Principal, UpdateProfileInput } from './identity.schema.ts';
import { platformPermissionsOf } from './permissions.ts';
import { UUID } from '../ids.ts';


export type IdentityService = ReturnType<typeof createIdentityService>;

/**
 * Turns a verified token identity into an Actor in one tenant. Users are provisioned just in time
 * on their first call (matched by email to a user provisioned ahead, else created), and
 * `lastLoginAt` moves to the token's issue time whenever a newer token is seen. Resolved actors
 * are cached for `cacheTtlMs` per token, so a membership change takes effect within that time
 * (at once in this process for a deleted tenant: see `forgetTenant`). Also the caller's own view:
 * the profile and the tenants they belong to.
 */
export function createIdentityService(deps: { db: Db; cacheTtlMs?: number; now?: () => number }) {
  const { db } = deps;
  const ttl = deps.cacheTtlMs ?? 5_000;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { actor: Actor; expires: number }>();
  const principals = new Map<string, { principal: Principal; expires: number }>();

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

    const wanted = tenantHint ?? identity.tenant;
    const membership = wanted
      ? memberships.find((m) => (UUID.test(wanted) ? m.tenantId === wanted.toLowerCase() : m.tenantSlug === wanted))
      : memberships[0];
    if (!membership) throw new ForbiddenError(wanted ? `no active membership in tenant "${wanted}"` : 'no active tenant membership');
    return {
      userId: user.id,
      email: user.email,
      tenantId: membership.tenantId,
      tenantSlug: membership.tenantSlug,
      roles: membership.roles,
      permissions: new Set(membership.permissions),
    };
  }

  return {
    async resolveActor(identity: Identity, tenantHint?: string): Promise<Actor> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}|${tenantHint ?? identity.tenant ?? ''}`;
      const hit = cache.get(key);
      if (hit && hit.expires > now()) return hit.actor;
      const actor = await resolve(identity, tenantHint);
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { actor, expires: now() + ttl });
      return actor;
    },

    /** The token's user without choosing a tenant, with the platform permissions of their platform roles. */
    async resolveUser(identity: Identity): Promise<Principal> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}`;
      const hit = principals.get(key);
      if (hit && hit.expires > now()) return hit.principal;
      const user = await db.system((tx) => provisionUser(tx, identity));
      const principal: Principal = {
        userId: user.id,
        email: user.email,
        ...(identity.emailVerified === true && identity.email ? { verifiedEmail: identity.email } : {}),
        platformRoles: user.platformRoles,
        platformPermissions: platformPermissionsOf(user.platformRoles),
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
      return me;
    },

    /** Changes the caller's `name` and deep-merges `preferences`; returns the whole record. */
    async updateProfile(principal: Principal, input: UpdateProfileInput): Promise<Me> {
      return db.system(async (tx) => {
        const stored = input.preferences ? await lockUserPreferences(tx, principal.userId) : undefined;
        const preferences = input.preferences ? (mergePatch(stored ?? {}, input.preferences) as Record<string, unknown>) : undefined;
        await updateUserProfile(tx, principal.userId, { name: input.name, preferences });
        const me = await findMe(tx, principal.userId);
        if (!me) throw new NotFoundError('user');
        return me;
      });
    },

    /** The caller's tenants: one entry per active membership in a tenant that is not deleted. */
    async tenants(principal: Principal): Promise<TenantMembership[]> {
      return db.system((tx) => listMemberships(tx, principal.userId));
    },
  };
}
