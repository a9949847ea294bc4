import type { Tx } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import { mergePatch } from '../json/merge-patch.ts';
import type { Permission } from '../auth/permissions.ts';
import { createCallers, type CallersDeps } from './callers.ts';
import { findMe, holdersOf, listActiveMemberships, lockUserPreferences, membershipPermissions, updateUserProfile, type MembershipRow } from './identity.repo.ts';
import { ensureDefaultRoles } from './default-roles.ts';
import type { Me, Principal, ProfileChanges, UpdateProfileInput } from './identity.schema.ts';

export type IdentityService = ReturnType<typeof createIdentityService>;

/**
 * Identity: the callers resolved from their tokens (callers.ts), and what other domains ask of
 * identity: a user's memberships and the permissions they grant, the tenants' built-in roles,
 * and the user's profile (one record per user, which v4 `me` and v3 users both change).
 */
export function createIdentityService(deps: CallersDeps) {
  const { db } = deps;

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
    ...createCallers(deps),

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
