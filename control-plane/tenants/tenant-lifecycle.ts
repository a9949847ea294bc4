import type { Db, Tx } from '../db/client.ts';
import { tenantSubject, type Declarer } from '../declarations/declarations.schema.ts';
import { createDeclarationsService, type DeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { Outbox, OutboxStart } from '../outbox/outbox.service.ts';
import type { StorageBackend } from '../storage/storage.schema.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import { findTenant, grantRoles, insertTenant, type NewTenant } from './tenants.repo.ts';
import type { CreateChildTenantInput, ProvisionTenantPlan, Tenant } from './tenants.schema.ts';

/** The role a tenant's administrators hold, and the one self-provisioned and invited users get. */
export const TENANT_ADMIN_ROLE = 'tenant-admin';
export const MEMBER_ROLE = 'member';

/**
 * The status reason earlier versions gave a tenant whose first provisioning start the workflow
 * engine refused (the start now waits in the outbox); declaring such a tenant again provisions it.
 */
export const NOT_ACCEPTED = 'the workflow engine did not accept the provisioning';

/** The channel on which the database announces tenant status changes (migration 0008). */
export const TENANT_STATUS_CHANNEL = 'tenant_status';

const isUniqueViolation = (error: unknown, constraint: string) =>
  (error as { code?: string })?.code === '23505' && (error as { constraint_name?: string }).constraint_name === constraint;

/** What the tenants domain is made of: the database, the workflow engine and its outbox, the identity functions it calls, the declarations' claims. */
export interface TenantsDeps {
  db: Db;
  workflows?: WorkflowsPort;
  /** Where a tenant's provisioning start is written in the tenant's transaction, and its waiting starts removed when it is deleted (control-plane/outbox). */
  outbox?: Pick<Outbox, 'enqueue' | 'enqueueUnlessWaiting' | 'dispatch' | 'dropStartsOf'>;
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

  const outbox = () => {
    if (!deps.outbox) throw new DomainError('INTERNAL_ERROR', 'the workflow engine is not configured');
    return deps.outbox;
  };

  /** The tenant's one provisioning run: its id never runs twice. */
  const provisioningStart = (tenantId: string, storageBackends?: StorageBackend[]): OutboxStart => {
    const plan: ProvisionTenantPlan = { tenantId, ...(storageBackends ? { storageBackends } : {}) };
    return { workflowType: PROVISION_TENANT.type, workflowId: PROVISION_TENANT.workflowId(tenantId), workflowKey: PROVISION_TENANT.key, args: [plan], tenantId };
  };

  /** Writes the start of the tenant's provisioning in the platform transaction `tx`; dispatch it once `tx` has committed. */
  const queueProvisioning = (tx: Tx, tenantId: string, storageBackends?: StorageBackend[]) => outbox().enqueue(tx, provisioningStart(tenantId, storageBackends));

  /**
   * Starts the provisioning of a tenant that reads `provisioning` unless its start waits already (a
   * tenant that an earlier version committed without one); a run under way is left as it is.
   */
  async function startProvisioning(tenantId: string, storageBackends?: StorageBackend[]): Promise<void> {
    const start = await db.system((tx) => outbox().enqueueUnlessWaiting(tx, provisioningStart(tenantId, storageBackends)));
    if (start) await outbox().dispatch(start);
  }

  /**
   * Inserts the tenant (optionally with a first administrator, or recording the Kubernetes object
   * that declares it) with the start of its provisioning, in one transaction: the outbox starts it
   * once committed, at once or, while the workflow engine cannot be reached, when it can.
   */
  async function create(tenant: NewTenant, options: { firstAdminId?: string; storageBackends?: StorageBackend[]; declaredBy?: Declarer } = {}): Promise<Tenant> {
    const { created, start } = await db
      .system(async (tx) => {
        const row = await insertTenant(tx, tenant);
        // Its roles come with it (the provisioning run ensures them again): its first administrator
        // holds tenants.manage at once, to delete a tenant whose provisioning has not run.
        await identity.ensureDefaultRoles(tx, row.id);
        if (options.firstAdminId) await grantRoles(tx, row.id, options.firstAdminId, [TENANT_ADMIN_ROLE]);
        if (options.declaredBy) await declarations.claim(tx, tenantSubject(row.id), `tenant "${row.slug}"`, options.declaredBy);
        return { created: row, start: await queueProvisioning(tx, row.id, options.storageBackends) };
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error, 'tenants_slug_key')) {
          throw new ConflictError(`slug "${tenant.slug}" is already taken`, { field: 'slug' });
        }
        throw error;
      });
    await outbox().dispatch(start);
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

  return { queueProvisioning, startProvisioning, create, createChildOf };
}
