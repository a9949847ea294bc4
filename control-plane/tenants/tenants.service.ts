import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor, Principal } from '../identity/identity.schema.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { createTenantLifecycle, TENANT_ADMIN_ROLE, TENANT_STATUS_CHANNEL, type TenantLifecycle, type TenantsDeps } from './tenant-lifecycle.ts';
import { createTenantUsers } from './tenant-users.ts';
import { countLiveChildren, findTenant, grantRoles, isWithin, listMemberships, softDeleteTenant } from './tenants.repo.ts';
import type { CreateChildTenantInput, CreateRootTenantInput, MembershipGrant, Tenant, TenantMembership, TenantStatus } from './tenants.schema.ts';

export type TenantsService = ReturnType<typeof createTenantsService>;

/**
 * Tenants as API callers and other domains use them: the tenant lifecycle: creation (root or child) starts the `provisionTenant` workflow
 * (`tenant-<id>-provision`), whose activities below bring the tenant from `provisioning` to
 * `active` (or `failed`); soft deletion; and memberships granted by administrators, by the
 * bootstrap of a child tenant, or by self-provisioning. Every path that creates a tenant (v4
 * routes now, the Kubernetes operator later) goes through `create`, so tenants end alike.
 */
export function createTenantsService(deps: TenantsDeps & { lifecycle?: TenantLifecycle; invitationTtlMs?: number }) {
  const { db, identity } = deps;
  const { create, createChildOf } = deps.lifecycle ?? createTenantLifecycle(deps);

  return {
    ...createTenantUsers(deps),

    /** A root tenant; the caller (who holds the platform permission) becomes its first `tenant-admin`. */
    async createRoot(principal: Principal, input: CreateRootTenantInput): Promise<Tenant> {
      return create({ ...input, parentId: null }, { firstAdminId: principal.userId });
    },

    /** A child of the actor's tenant, in the parent's home region unless another is given. No one is its member yet. */
    async createChild(actor: Actor, input: CreateChildTenantInput): Promise<Tenant> {
      return createChildOf(actor.tenantId, input);
    },

    createChildOf,

    /** Makes the actor (an administrator of the parent) `tenant-admin` of a direct child; idempotent. */
    async bootstrapAdmin(actor: Actor, childRef: string): Promise<MembershipGrant> {
      return db.system(async (tx) => {
        const child = await findTenant(tx, childRef);
        if (!child || child.parentId !== actor.tenantId) throw new NotFoundError('child tenant');
        return grantRoles(tx, child.id, actor.userId, [TENANT_ADMIN_ROLE]);
      });
    },

    /**
     * Soft-deletes a tenant: it stops resolving for every member at once (in this process; within
     * the identity cache's lifetime elsewhere) and disappears from listings; its rows stay. Allowed
     * to holders of `tenants.manage` there (whatever its lifecycle status) or `platform.tenants.manage`.
     * A tenant with live children is a 409. The starts waiting for it in the workflow outbox are
     * removed in the same transaction.
     */
    async delete(principal: Principal, tenantRef: string): Promise<void> {
      const tenant = await db.system((tx) => findTenant(tx, tenantRef));
      const permissions = tenant ? await identity.permissionsIn(principal.userId, tenant.id) : undefined;
      const platform = principal.platformPermissions.has('platform.tenants.manage');
      if (!platform && !permissions?.includes('tenants.manage')) throw new ForbiddenError(`no permission to delete tenant "${tenantRef}"`);
      if (!tenant) throw new NotFoundError('tenant');
      await db.system(async (tx) => {
        if ((await countLiveChildren(tx, tenant.id)) > 0) throw new ConflictError('the tenant has child tenants; delete them first');
        await softDeleteTenant(tx, tenant.id);
        // Its provisioning start (and any job's or execution's) still waiting for the workflow engine never runs.
        await deps.outbox?.dropStartsOf(tx, tenant.id);
      });
      identity.forgetTenant(tenant.id);
      // The tenant is deleted whatever becomes of its run: one the engine cannot be asked to cancel
      // (unreachable) goes on, finds the tenant deleted, and cannot activate it.
      if (tenant.status === 'provisioning') await deps.workflows?.cancel(PROVISION_TENANT.workflowId(tenant.id)).catch(() => undefined);
    },

    /**
     * A tenant's status now, then each change of it, until it is no longer `provisioning` (active,
     * failed or deleted), or `signal` aborts. For a member of the tenant (whatever its status), an
     * administrator of its parent, or a holder of `platform.tenants.manage`; anyone else is refused
     * as for an unknown tenant. Stopping it (or aborting) releases its database listener.
     */
    async *watchStatus(principal: Principal, tenantRef: string, signal?: AbortSignal): AsyncGenerator<TenantStatus, void> {
      const found = await db.system((tx) => findTenant(tx, tenantRef));
      const allowed =
        principal.platformPermissions.has('platform.tenants.manage') ||
        (found !== undefined && (await identity.permissionsIn(principal.userId, found.id)) !== undefined) ||
        (found?.parentId ? (await identity.permissionsIn(principal.userId, found.parentId))?.includes('tenants.manage') === true : false);
      if (!allowed) throw new ForbiddenError(`no access to tenant "${tenantRef}"`);
      if (!found) throw new NotFoundError('tenant');
      const tenant = found;
      // Listening starts before the first read, so that no change falls between them.
      let changed = true;
      let wake = () => {};
      const onChange = () => {
        changed = true;
        wake();
      };
      const subscription = await db.sql.listen(TENANT_STATUS_CHANNEL, (slug) => slug === tenant.slug && onChange(), onChange);
      signal?.addEventListener('abort', onChange);
      try {
        let last: string | undefined;
        while (!signal?.aborted) {
          if (!changed) {
            await new Promise<void>((resolve) => (wake = resolve));
            continue;
          }
          changed = false;
          const current = await db.system((tx) => findTenant(tx, tenant.id));
          const status: TenantStatus = current
            ? { id: current.id, slug: current.slug, status: current.status, statusReason: current.statusReason }
            : { id: tenant.id, slug: tenant.slug, status: 'deleted', statusReason: null };
          if (status.status !== last) yield status;
          last = status.status;
          if (status.status !== 'provisioning') return;
        }
      } finally {
        signal?.removeEventListener('abort', onChange);
        await subscription.unlisten();
      }
    },

    /** A live tenant by id or slug, for the operator and the apps service. */
    async find(ref: string): Promise<Tenant | undefined> {
      return db.system((tx) => findTenant(tx, ref));
    },

    /** Whether `tenantId` is `ancestorId` or a live tenant below it. */
    async isWithin(tenantId: string, ancestorId: string): Promise<boolean> {
      return db.system((tx) => isWithin(tx, tenantId, ancestorId));
    },

    /** The caller's tenants (v4 `GET /identity/tenants`): one entry per active membership in a tenant that is not deleted. */
    async mine(principal: Principal): Promise<TenantMembership[]> {
      return db.system((tx) => listMemberships(tx, principal.userId));
    },
  };
}
