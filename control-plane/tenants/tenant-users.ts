import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor, Principal } from '../identity/identity.schema.ts';
import { UUID } from '../ids.ts';
import { MEMBER_ROLE, TENANT_ADMIN_ROLE, type TenantsDeps } from './tenant-lifecycle.ts';
import {
  acceptInvitation,
  deleteInvitation,
  deleteMembership,
  ensureMembership,
  findInvitation,
  findTenant,
  findUserByEmail,
  findUserById,
  listMemberships,
} from './tenants.repo.ts';
import type { MembershipGrant, PlatformUser, TenantMembership } from './tenants.schema.ts';

/** How long an invitation can be accepted, unless the operator sets another time (`INVITATION_TTL_DAYS`). */
export const DEFAULT_INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * User administration across tenants: finding a user and their memberships for an administrator,
 * and memberships granted by an administrator or taken by self-provisioning.
 */
export function createTenantUsers(deps: TenantsDeps & { invitationTtlMs?: number }) {
  const { db, identity } = deps;
  const invitation = { ttlMs: deps.invitationTtlMs ?? DEFAULT_INVITATION_TTL_MS };

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
     * their consent. An invitation can be accepted for `invitationTtlMs` (default 7 days); inviting
     * again renews it. An existing membership is left as it is.
     */
    async provisionUser(actor: Actor, userRef: string): Promise<MembershipGrant> {
      return db.system(async (tx) => {
        const user = await findUserById(tx, userRef);
        if (!user) throw new NotFoundError('user');
        return ensureMembership(tx, actor.tenantId, user.id, [MEMBER_ROLE], invitation);
      });
    },

    /**
     * Removes a user from the actor's tenant: their membership, or the invitation they have not
     * accepted. Their open realtime connections end at the next access check (within seconds) and
     * this process forgets their resolved calls at once (other processes within their cache's
     * time). The tenant's last administrator cannot be removed (409).
     */
    async removeUser(actor: Actor, userRef: string): Promise<void> {
      const userId = userRef === 'me' ? actor.userId : userRef.toLowerCase();
      if (!UUID.test(userId)) throw new NotFoundError('member');
      const outcome = await db.system((tx) => deleteMembership(tx, actor.tenantId, userId, TENANT_ADMIN_ROLE));
      if (outcome === 'not-found') throw new NotFoundError('member');
      if (outcome === 'last-admin') {
        throw new ConflictError(`the user is the tenant's last administrator and cannot be removed: make another member ${TENANT_ADMIN_ROLE} first`);
      }
      identity.forgetTenant(actor.tenantId);
    },

    /**
     * Self-provisioning: the caller accepts their invitation to an active tenant while it has not
     * expired, or else joins it as `member` when their token's verified e-mail domain is one of
     * the tenant's `domains`. Any refusal (unknown tenant included) is a 403, so the route reveals
     * no tenant, but for an expired invitation, which says so; an existing membership is returned
     * unchanged.
     */
    async provisionSelf(principal: Principal, tenantRef: string): Promise<MembershipGrant> {
      return db.system(async (tx) => {
        const found = await findTenant(tx, tenantRef);
        const tenant = found?.status === 'active' ? found : undefined;
        const domain = principal.verifiedEmail?.split('@').pop()?.toLowerCase();
        const domainJoins = tenant !== undefined && domain !== undefined && tenant.domains.includes(domain);
        const invited = tenant ? await findInvitation(tx, tenant.id, principal.userId) : undefined;
        if (tenant && invited && (!invited.expired || domainJoins)) {
          const accepted = await acceptInvitation(tx, tenant.id, principal.userId);
          if (accepted) return { membership: accepted, created: true };
        }
        if (invited?.expired && !domainJoins) {
          throw new ForbiddenError(`your invitation to tenant "${tenantRef}" expired on ${invited.expiresAt}: ask its administrator to invite you again`);
        }
        if (!domain) throw new ForbiddenError('self-provisioning needs a verified e-mail address, or an invitation to the tenant');
        if (!tenant || !domainJoins) throw new ForbiddenError(`tenant "${tenantRef}" does not accept e-mail domain "${domain}"`);
        return ensureMembership(tx, tenant.id, principal.userId, [MEMBER_ROLE]);
      });
    },

    /** The caller declines their invitation to a tenant (expired or not): it is deleted. 404 when there is none, whatever the tenant. */
    async declineInvitation(principal: Principal, tenantRef: string): Promise<void> {
      const declined = await db.system(async (tx) => {
        const tenant = await findTenant(tx, tenantRef);
        return tenant !== undefined && (await deleteInvitation(tx, tenant.id, principal.userId));
      });
      if (!declined) throw new NotFoundError(`invitation to tenant "${tenantRef}"`);
    },
  };
}
