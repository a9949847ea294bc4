import type { Db } from '../db/client.ts';
import { tenantSubject, type Declarer } from '../declarations/declarations.schema.ts';
import { createDeclarationsService, type DeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { StorageBackend } from '../storage/storage.schema.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import { findTenant, finishProvisioning, grantRoles, insertTenant, type NewTenant } from './tenants.repo.ts';
import type { CreateChildTenantInput, ProvisionTenantPlan, Tenant } from './tenants.schema.ts';

/** The role a tenant's administrators hold, and the one self-provisioned and invited users get. */
export const TENANT_ADMIN_ROLE = 'tenant-admin';
export const MEMBER_ROLE = 'member';

/** The status reason of a tenant whose provisioning the workflow engine did not accept; declaring it again retries. */
export const NOT_ACCEPTED = 'the workflow engine did not accept the provisioning';

/** The channel on which the database announces tenant status changes (migration 0008). */
export const TENANT_STATUS_CHANNEL = 'tenant_status';

const isUniqueViolation = (error: unknown, constraint: string) =>
  (error as { code?: string })?.code === '23505' && (error as { constraint_name?: string }).constraint_name === constraint;

/** What the tenants domain is made of: the database, the workflow engine, the identity functions it calls, the declarations' claims. */
export interface TenantsDeps {
  db: Db;
  workflows?: WorkflowsPort;
  identity: Pick<IdentityService, 'forgetTenant' | 'activeMemberships' | 'permissionsIn' | 'ensureDefaultRoles'>;
  declarations?: DeclarationsService;
}

export type TenantLifecycle = ReturnType<typeof createTenantLifecycle>;

/**
 * How a tenant comes to be, whoever asks (the API, an app, the operator): inserted with its
 * roles (and a first administrator, or the object that declares it), then provisioned by the
 * `provisionTenant` workflow (`tenant-<id>-provision`). Every path goes through `create`, so
 * tenants end alike.
 */
export function createTenantLifecycle(deps: TenantsDeps) {
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

  return { startProvisioning, create, createChildOf };
}
