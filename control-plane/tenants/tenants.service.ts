import type { Db } from '../db/client.ts';
import { tenantSubject, type Declarer, type DeclaringObject } from '../declarations/declarations.schema.ts';
import { createDeclarationsService, type DeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, DomainError, ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor, Principal } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import type { StorageBackend } from '../storage/storage.schema.ts';
import {
  countLiveChildren,
  acceptInvitation,
  ensureMembership,
  findTenant,
  findUserByEmail,
  findUserById,
  finishProvisioning,
  grantRoles,
  insertTenant,
  isWithin,
  listMemberships,
  reopenProvisioning,
  softDeleteTenant,
  updateTenantProfile,
  type NewTenant,
} from './tenants.repo.ts';
import type {
  CreateChildTenantInput,
  CreateRootTenantInput,
  MembershipGrant,
  PlatformUser,
  ProvisionTenantPlan,
  Tenant,
  TenantDeclaration,
  TenantMembership,
  TenantStatus,
} from './tenants.schema.ts';

/** The role a tenant's administrators hold, and the one self-provisioned and invited users get. */
export const TENANT_ADMIN_ROLE = 'tenant-admin';
export const MEMBER_ROLE = 'member';

/** The status reason of a tenant whose provisioning the workflow engine did not accept; declaring it again retries. */
export const NOT_ACCEPTED = 'the workflow engine did not accept the provisioning';

/** The channel on which the database announces tenant status changes (migration 0008). */
const TENANT_STATUS_CHANNEL = 'tenant_status';

const isUniqueViolation = (error: unknown, constraint: string) =>
  (error as { code?: string })?.code === '23505' && (error as { constraint_name?: string }).constraint_name === constraint;

export type TenantsService = ReturnType<typeof createTenantsService>;

/**
 * The tenant lifecycle: creation (root or child) starts the `provisionTenant` workflow
 * (`tenant-<id>-provision`), whose activities below bring the tenant from `provisioning` to
 * `active` (or `failed`); soft deletion; and memberships granted by administrators, by the
 * bootstrap of a child tenant, or by self-provisioning. Every path that creates a tenant (v4
 * routes now, the Kubernetes operator later) goes through `create`, so tenants end alike.
 */
export function createTenantsService(deps: {
  db: Db;
  workflows?: WorkflowsPort;
  identity: Pick<IdentityService, 'forgetTenant' | 'activeMemberships' | 'permissionsIn' | 'ensureDefaultRoles'>;
  declarations?: DeclarationsService;
}) {
  const { db, identity } = deps;
  const declarations = deps.declarations ?? createDeclarationsService();

  /** Starts (or, for a tenant already provisioning, finds) the tenant's provisioning workflow. */
  async function startProvisioning(tenantId: string, storageBackends?: StorageBackend[]): Promise<void> {
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    const plan: ProvisionTenantPlan = { tenantId, ...(storageBackends ? { storageBackends } : {}) };
    await deps.workflows.start(PROVISION_TENANT.type, {
      workflowId: PROVISION_TENANT.workflowId(tenantId),
      args: [plan],
      tenantId,
      workflowKey: PROVISION_TENANT.key,
    });
  }

  /**
   * The first start of a new tenant's provisioning. If the workflow engine refuses it (unreachable,
   * say), the tenant is `failed` with NOT_ACCEPTED, which a later declaration of it retries.
   */
  async function startNewProvisioning(tenantId: string, storageBackends?: StorageBackend[]): Promise<void> {
    try {
      await startProvisioning(tenantId, storageBackends);
    } catch (error) {
      await db.system((tx) => finishProvisioning(tx, tenantId, 'failed', NOT_ACCEPTED));
      throw error;
    }
  }

  /**
   * Inserts the tenant (optionally with a first administrator, or recording the Kubernetes object
   * that declares it) and starts its provisioning.
   */
  async function create(tenant: NewTenant, options: { firstAdminId?: string; storageBackends?: StorageBackend[]; declaredBy?: Declarer } = {}): Promise<Tenant> {
    const created = await db
      .system(async (tx) => {
        const row = await insertTenant(tx, tenant);
        // Its roles come with it (the provisioning run ensures them again): its first administrator
        // holds tenants.manage at once, to delete a tenant whose provisioning has not run.
        await identity.ensureDefaultRoles(tx, row.id);
        if (options.firstAdminId) await grantRoles(tx, row.id, options.firstAdminId, [TENANT_ADMIN_ROLE]);
        if (options.declaredBy) await declarations.claim(tx, tenantSubject(row.id), `tenant "${row.slug}"`, options.declaredBy);
        return row;
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error, 'tenants_slug_key')) {
          throw new ConflictError(`slug "${tenant.slug}" is already taken`, { field: 'slug' });
        }
        throw error;
      });
    await startNewProvisioning(created.id, options.storageBackends);
    return created;
  }

  /** A child of `parentRef` (id or slug), in the parent's home region unless another is given; optionally with a first administrator. */
  async function createChildOf(parentRef: string, input: CreateChildTenantInput, firstAdminId?: string): Promise<Tenant> {
    const parent = await db.system((tx) => findTenant(tx, parentRef));
    if (!parent) throw new NotFoundError('tenant');
    const homeRegion = input.homeRegion ?? parent.homeRegion;
    if (!homeRegion) throw ValidationError.field('homeRegion', 'is required: the parent tenant has no home region');
    return create({ ...input, homeRegion, parentId: parent.id }, { firstAdminId });
  }

  /** Tenants in which the principal holds `tenants.manage` (active tenants only). */
  async function managedTenantIds(principal: Principal): Promise<Set<string>> {
    const memberships = await identity.activeMemberships(principal.userId);
    return new Set(memberships.filter((m) => m.permissions.includes('tenants.manage')).map((m) => m.tenantId));
  }

  return {
    startProvisioning,

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
     * A tenant with live children is a 409.
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
      });
      identity.forgetTenant(tenant.id);
      // The tenant is deleted whatever becomes of its run: one the engine cannot be asked to cancel
      // (unreachable) goes on, finds the tenant deleted, and cannot activate it.
      if (tenant.status === 'provisioning') await deps.workflows?.cancel(PROVISION_TENANT.workflowId(tenant.id)).catch(() => undefined);
    },

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

    /**
     * The tenant a declaration (a Kubernetes `Tenant`) describes, for the operator: created through
     * the same path as v4 when absent (the parent named by slug), its changeable fields (name,
     * domains, usecase, industry) brought to the declaration otherwise, and its provisioning
     * workflow started again while it is still provisioning. An existing tenant whose parent, home
     * region or starter template differs from the declaration's is a conflict. Idempotent.
     */
    async declare(declaration: TenantDeclaration): Promise<Tenant> {
      // The API server refuses a blank name; a character only JavaScript counts as a space can still trim to nothing.
      if (!declaration.name) throw ValidationError.field('name', 'must not be empty');
      const profile = { name: declaration.name, domains: declaration.domains, usecase: declaration.usecase, industry: declaration.industry ?? null };
      const existing = await db.system(async (tx) => {
        const found = await findTenant(tx, declaration.slug);
        if (found) {
          // Another object's tenant is refused first; a claim made here is undone if the check below fails.
          if (declaration.declaredBy) await declarations.claim(tx, tenantSubject(found.id), `tenant "${found.slug}"`, declaration.declaredBy);
          // Fields fixed at creation: a declaration that differs names another tenant than this one.
          // The declared parent is named by slug or by id.
          const declaredParent = declaration.parent ? await findTenant(tx, declaration.parent) : undefined;
          const sameParent = declaration.parent ? declaredParent?.id === found.parentId : !found.parentId;
          // The actual parent's slug is read only to name it in the refusal.
          const parentSlug = !sameParent && found.parentId ? (await findTenant(tx, found.parentId))?.slug : undefined;
          const differences = [
            !sameParent && `parent ${parentSlug ?? '(none)'}`,
            declaration.homeRegion && declaration.homeRegion !== found.homeRegion && `home region ${found.homeRegion}`,
            declaration.starterTemplate !== found.starterTemplate && `starter template ${found.starterTemplate}`,
          ].filter((difference): difference is string => typeof difference === 'string');
          if (differences.length) throw new ConflictError(`tenant "${declaration.slug}" exists with ${differences.join(', ')}, which cannot change`);
        }
        if (!found || !(await updateTenantProfile(tx, found.id, profile))) return found && { tenant: found, changed: false };
        return { tenant: (await findTenant(tx, found.id))!, changed: true };
      });
      if (existing) {
        const { tenant } = existing;
        if (existing.changed) identity.forgetTenant(tenant.id);
        // Started again while provisioning (a run under way is joined); a failure to start, such as
        // an unreachable engine, leaves the tenant provisioning, for the next declaration to retry.
        if (tenant.status === 'provisioning') await startProvisioning(tenant.id, declaration.storageBackends);
        // A tenant whose first start the engine refused is provisioned now.
        if (tenant.status === 'failed' && tenant.statusReason === NOT_ACCEPTED && (await db.system((tx) => reopenProvisioning(tx, tenant.id, NOT_ACCEPTED)))) {
          await startProvisioning(tenant.id, declaration.storageBackends);
          return { ...tenant, status: 'provisioning', statusReason: null };
        }
        return tenant;
      }
      const parent = declaration.parent ? await db.system((tx) => findTenant(tx, declaration.parent!)) : undefined;
      if (declaration.parent && !parent) throw new NotFoundError(`parent tenant "${declaration.parent}"`);
      const homeRegion = declaration.homeRegion ?? parent?.homeRegion;
      if (!homeRegion) throw ValidationError.field('homeRegion', 'is required for a root tenant');
      return create(
        { ...profile, industry: declaration.industry, slug: declaration.slug, starterTemplate: declaration.starterTemplate, homeRegion, parentId: parent?.id ?? null },
        { storageBackends: declaration.storageBackends, declaredBy: declaration.declaredBy },
      );
    },

    /**
     * Soft-deletes the tenant with this slug, for the operator; a tenant already gone is fine, and
     * one that another Kubernetes object declares is left alone.
     */
    async removeDeclared(slug: string, declaredBy?: DeclaringObject): Promise<void> {
      const tenant = await db.system(async (tx) => {
        const found = await findTenant(tx, slug);
        if (!found) return undefined;
        // The claim stays: a deleted tenant's slug is never used again.
        if (declaredBy && !(await declarations.holds(tx, tenantSubject(found.id), declaredBy))) return undefined;
        if ((await countLiveChildren(tx, found.id)) > 0) throw new ConflictError('the tenant has child tenants; delete them first');
        await softDeleteTenant(tx, found.id);
        return found;
      });
      if (!tenant) return;
      identity.forgetTenant(tenant.id);
      // As in `delete`: the tenant is deleted whatever becomes of its run.
      if (tenant.status === 'provisioning') await deps.workflows?.cancel(PROVISION_TENANT.workflowId(tenant.id)).catch(() => undefined);
    },

    /**
     * Calls `listener` with a tenant's slug whenever its lifecycle status changes (the database
     * announces it at commit), for the operator. The subscription survives reconnects; changes
     * announced while the connection was down are lost, so `resumed` is called after each reconnect.
     */
    async onStatusChange(listener: (slug: string) => void, resumed: () => void = () => {}): Promise<{ stop(): Promise<void> }> {
      let listening = false;
      const subscription = await db.sql.listen(TENANT_STATUS_CHANNEL, listener, () => {
        if (listening) resumed();
        listening = true;
      });
      return { stop: () => subscription.unlisten() };
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

    /** Activity: gives the tenant the default roles; idempotent. */
    async ensureDefaultRoles(tenantId: string): Promise<void> {
      await db.system((tx) => identity.ensureDefaultRoles(tx, tenantId));
    },

    /** Activity: marks a provisioning tenant `active`; a deleted or failed tenant is left as it is. */
    async activate(tenantId: string): Promise<void> {
      await db.system((tx) => finishProvisioning(tx, tenantId, 'active', null));
    },

    /** Activity: marks a provisioning tenant `failed` with the reason; idempotent. */
    async failProvisioning(outcome: { tenantId: string; reason: string }): Promise<void> {
      await db.system((tx) => finishProvisioning(tx, outcome.tenantId, 'failed', outcome.reason.slice(0, 1000)));
    },
  };
}
