import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor, Principal } from '../identity/identity.schema.ts';
import { MEMBER_ROLE, type TenantsDeps } from './tenant-lifecycle.ts';
import { acceptInvitation, ensureMembership, findTenant, findUserByEmail, findUserById, listMemberships } from './tenants.repo.ts';
import type { MembershipGrant, PlatformUser, TenantMembership } from './tenants.schema.ts';

/**
 * User administration across tenants: finding a user and their memberships for an administrator,
 * and memberships granted by an administrator or taken by self-provisioning.
 */
export function createTenantUsers(deps: TenantsDeps) {
  const { db, identity } = deps;

  /** Tenants in which the principal holds `tenants.manage` (active tenants only). */
  async function managedTenantIds(principal: Principal): Promise<Set<string>> {
    const memberships = await identity.activeMemberships(principal.userId);
    return new Set(memberships.filter((m) => m.permissions.includes('tenants.manage')).map((m) => m.tenantId));
  }

  return {
    /**
     * Looks a user up by e-mail: for administrators of some tenant (to invite) and platform readers.
     * When and whether the user signs in is shown to platform readers and to administrators of a
     * tenant the user belongs to; to another tenant's administrator, only who the user is.
     */
    async findUserByEmail(principal: Principal, email: string): Promise<PlatformUser> {
      const platformReader = principal.platformPermissions.has('platform.users.read');
      const managed = platformReader ? undefined : await managedTenantIds(principal);
      if (managed?.size === 0) throw new ForbiddenError('looking users up needs tenants.manage in some tenant');
      const user = await db.system((tx) => findUserByEmail(tx, email));
      if (!user) throw new NotFoundError('user');
      if (!managed) return user;
      const shared = (await db.system((tx) => listMemberships(tx, user.id))).some((m) => managed.has(m.id));
      if (shared) return user;
      const { id, email: address, name, status } = user;
      return { id, email: address, name, status };
    },

    /**
     * A user's memberships. The user sees all of their own, a platform reader everyone's; an
     * administrator sees only those in tenants they manage, so no tenant is revealed to a non-member.
     */
    async membershipsOf(principal: Principal, userRef: string): Promise<TenantMembership[]> {
      const self = userRef === 'me' || userRef === principal.userId;
      const everything = self || principal.platformPermissions.has('platform.users.read');
      const managed = everything ? undefined : await managedTenantIds(principal);
      if (managed?.size === 0) throw new ForbiddenError('reading memberships needs tenants.manage in some tenant');
      const userId = self ? principal.userId : userRef;
      return db.system(async (tx) => {
        if (!(await findUserById(tx, userId))) throw new NotFoundError('user');
        const memberships = await listMemberships(tx, userId);
        return managed ? memberships.filter((m) => managed.has(m.id)) : memberships;
      });
    },

    /**
     * Invites an existing user to the actor's tenant as `member`: the membership is `invited` until
     * the user accepts it (`provisionSelf`), so no administrator puts a user in a tenant without
     * their consent. An existing membership or invitation is left as it is.
     */
    async provisionUser(actor: Actor, userRef: string): Promise<MembershipGrant> {
      return db.system(async (tx) => {
        const user = await findUserById(tx, userRef);
        if (!user) throw new NotFoundError('user');
        return ensureMembership(tx, actor.tenantId, user.id, [MEMBER_ROLE], 'invited');
      });
    },

    /**
     * Self-provisioning: the caller accepts their invitation to an active tenant, or else joins it
     * as `member` when their token's verified e-mail domain is one of the tenant's `domains`. Any
     * refusal (unknown tenant included) is a 403, so the route reveals no tenant; an existing
     * membership is returned unchanged.
     */
    async provisionSelf(principal: Principal, tenantRef: string): Promise<MembershipGrant> {
      return db.system(async (tx) => {
        const tenant = await findTenant(tx, tenantRef);
        if (tenant && tenant.status === 'active') {
          const accepted = await acceptInvitation(tx, tenant.id, principal.userId);
          if (accepted) return { membership: accepted, created: true };
        }
        const domain = principal.verifiedEmail?.split('@').pop()?.toLowerCase();
        if (!domain) throw new ForbiddenError('self-provisioning needs a verified e-mail address, or an invitation to the tenant');
        if (!tenant || tenant.status !== 'active' || !tenant.domains.includes(domain)) {
          throw new ForbiddenError(`tenant "${tenantRef}" does not accept e-mail domain "${domain}"`);
        }
        return ensureMembership(tx, tenant.id, principal.userId, [MEMBER_ROLE]);
      });
    },
  };
}
