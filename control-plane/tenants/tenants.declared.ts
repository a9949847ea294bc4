import { tenantSubject, type DeclaringObject } from '../declarations/declarations.schema.ts';
import { createDeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { createTenantLifecycle, NOT_ACCEPTED, TENANT_STATUS_CHANNEL, type TenantLifecycle, type TenantsDeps } from './tenant-lifecycle.ts';
import { countLiveChildren, findTenant, reopenProvisioning, softDeleteTenant, updateTenantProfile } from './tenants.repo.ts';
import type { Tenant, TenantDeclaration } from './tenants.schema.ts';

export type TenantsDeclared = ReturnType<typeof createTenantsDeclared>;

/**
 * Tenants as Kubernetes objects declare them, for the operator (and the apps that declare child
 * tenants): declared and removed idempotently, claimed by the declaring object, and the status
 * changes the database announces.
 */
export function createTenantsDeclared(deps: TenantsDeps & { lifecycle?: TenantLifecycle }) {
  const { db, identity } = deps;
  const declarations = deps.declarations ?? createDeclarationsService();
  const { create, queueProvisioning, startProvisioning } = deps.lifecycle ?? createTenantLifecycle(deps);

  return {
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
        // Its start waits in the outbox or has been made; one is written only for a tenant left without.
        if (tenant.status === 'provisioning') await startProvisioning(tenant.id, declaration.storageBackends);
        // A tenant whose first start an earlier version gave up on is reopened with its start.
        if (tenant.status === 'failed' && tenant.statusReason === NOT_ACCEPTED) {
          const start = await db.system(async (tx) => (await reopenProvisioning(tx, tenant.id, NOT_ACCEPTED)) && queueProvisioning(tx, tenant.id, declaration.storageBackends));
          if (start) {
            await deps.outbox?.dispatch(start);
            return { ...tenant, status: 'provisioning', statusReason: null };
          }
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
        await deps.outbox?.dropStartsOf(tx, found.id);
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

    /** A live tenant by id or slug, for the operator and the apps service. */
    async find(ref: string): Promise<Tenant | undefined> {
      return db.system((tx) => findTenant(tx, ref));
    },
  };
}
