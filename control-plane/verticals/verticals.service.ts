import type { App } from '../apps/apps.schema.ts';
import type { AppsService } from '../apps/apps.service.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { namedVersion, type IfMatch, type ResourceData } from '../resources/resource-ops.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { ListResourcePageInput, ReplaceAtVersionInput, Resource, ResourceListPage } from '../resources/resources.schema.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import type { UpdateVerticalResourceInput, Vertical } from './verticals.schema.ts';

export type VerticalsService = ReturnType<typeof createVerticalsService>;

/** App lifecycle statuses whose resources are served; a `suspended` or `retired` app shows only its enrollment. */
const SERVING_STATUSES: ReadonlySet<App['status']> = new Set(['pending', 'active']);

/** An app found for a caller, with the tenant its resources live in and the caller acting there. */
interface Surface {
  app: App;
  tenant: Pick<Tenant, 'id' | 'slug' | 'status'>;
  actor: Actor;
}

/**
 * An enrolled app's surface (`/v4/verticals/{key}/...`): its enrollment and object types, and its
 * resources through the resources service, in the app's tenant (its child tenant, else the company
 * tenant). The caller names the company tenant or the app's child tenant (`tenant_id`, else their
 * token's tenant) and must be a member there; they act in the app's tenant with the permissions of
 * that membership. Anyone else finds no such app (404).
 */
export function createVerticalsService(deps: {
  apps: Pick<AppsService, 'findByKey' | 'findByChildTenant'>;
  tenants: Pick<TenantsService, 'find' | 'isWithin'>;
  objectTypes: Pick<ObjectTypesService, 'published'>;
  resources: Pick<ResourcesService, 'get' | 'listPage' | 'create' | 'replaceAtVersion' | 'update' | 'remove'>;
}) {
  const { apps, tenants, objectTypes, resources } = deps;

  /** The app `key` as the actor's tenant sees it: enrolled there (the company tenant), or with the actor's tenant as its child. */
  async function surface(actor: Actor, key: string): Promise<Surface> {
    const app = (await apps.findByKey(actor.tenantId, key)) ?? (await apps.findByChildTenant(actor.tenantId, key));
    if (!app) throw new NotFoundError(`app "${key}"`);
    const tenantId = app.childTenantId ?? app.companyTenantId;
    // What an enrollment names is believed only where the tenant tree agrees: a tenant below the company tenant.
    const tenant = tenantId === actor.tenantId ? undefined : await tenants.find(tenantId);
    if (tenantId !== actor.tenantId && (!tenant || !(await tenants.isWithin(tenant.id, app.companyTenantId)))) {
      throw new NotFoundError(`the tenant of app "${key}"`);
    }
    const where = tenant ?? { id: actor.tenantId, slug: actor.tenantSlug, status: 'active' as const };
    return { app, tenant: { id: where.id, slug: where.slug, status: where.status }, actor: { ...actor, tenantId: where.id, tenantSlug: where.slug } };
  }

  /** The surface, when the app's resources may be used now. */
  async function serving(actor: Actor, key: string): Promise<Surface> {
    const found = await surface(actor, key);
    if (!SERVING_STATUSES.has(found.app.status)) throw new ForbiddenError(`app "${key}" is ${found.app.status}: its resources are not served`);
    if (found.tenant.status !== 'active') {
      throw new ConflictError(`the tenant of app "${key}" is ${found.tenant.status}, not active`, { tenantStatus: found.tenant.status });
    }
    return found;
  }

  return {
    /** The enrollment, the app's tenant and that tenant's published object types. */
    async get(actor: Actor, key: string): Promise<Vertical> {
      const { app, tenant, actor: inApp } = await surface(actor, key);
      return { app, tenant, objectTypes: (await objectTypes.published(inApp)).items };
    },

    async listResources(actor: Actor, key: string, input: ListResourcePageInput): Promise<ResourceListPage> {
      return resources.listPage((await serving(actor, key)).actor, input);
    },

    async getResource(actor: Actor, key: string, type: string, id: string): Promise<Resource> {
      return resources.get((await serving(actor, key)).actor, type, id);
    },

    async createResource(actor: Actor, key: string, type: string, data: ResourceData, idempotencyKey?: string): Promise<Resource> {
      return resources.create((await serving(actor, key)).actor, type, data, idempotencyKey);
    },

    async replaceResource(actor: Actor, key: string, input: ReplaceAtVersionInput): Promise<Resource> {
      return resources.replaceAtVersion((await serving(actor, key)).actor, input);
    },

    /** Merges `data` into the stored data (RFC 7386); at the version named, when one is. */
    async updateResource(actor: Actor, key: string, input: Omit<UpdateVerticalResourceInput, 'key'>): Promise<Resource> {
      const inApp = (await serving(actor, key)).actor;
      return resources.update(inApp, input.type, input.id, input.data, namedVersion(input.version, input.ifMatch));
    },

    async removeResource(actor: Actor, key: string, type: string, id: string, ifMatch?: IfMatch): Promise<void> {
      return resources.remove((await serving(actor, key)).actor, type, id, ifMatch);
    },
  };
}
