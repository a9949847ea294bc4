import type { Db } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { DEFAULT_STARTER_TEMPLATE, type Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import type { KeyedResources } from '../resources/keyed-resources.ts';
import { appData, appRecords } from './app-records.ts';
import { childSlugIssue, kebabCase, type App, type CreateAppInput } from './apps.schema.ts';

export type AppsService = ReturnType<typeof createAppsService>;

const keyTaken = (key: string) => new ConflictError(`app key "${key}" is already taken in this tenant`, { field: 'key' });

/**
 * App (vertical) enrollments of a company tenant, kept as `tenant-vertical-enrollment` resources
 * there, for the API and the domains that read apps. An app may bring a child tenant, created
 * through the tenants service like any other child (so it is provisioned by the same workflow).
 * v4 creates apps; the operator declares them through apps.declared.ts.
 */
export function createAppsService(deps: {
  db: Db;
  tenants: Pick<TenantsService, 'createChildOf' | 'find' | 'isWithin'>;
  identity: Pick<IdentityService, 'permissionsIn'>;
  /** The enrollment resources (the resources domain writes them, with their history). */
  enrollments: KeyedResources;
}) {
  const { db, tenants, identity } = deps;
  const { findAppByKey, findAppsOfChildTenant, insertApp } = appRecords(deps.enrollments);

  return {
    /** The app enrolled in a tenant under `key`. */
    async findByKey(tenantId: string, key: string): Promise<App | undefined> {
      return db.inTenant(tenantId, (tx) => findAppByKey(tx, key));
    },

    /**
     * The app with `key` whose child tenant is `childTenantId`, enrolled in a tenant above that
     * child: what an enrollment says is believed only where the tenant tree agrees.
     */
    async findByChildTenant(childTenantId: string, key: string): Promise<App | undefined> {
      const named = await db.system((tx) => findAppsOfChildTenant(tx, childTenantId, key));
      for (const app of named) {
        if (app.companyTenantId !== childTenantId && (await tenants.isWithin(childTenantId, app.companyTenantId))) return app;
      }
      return undefined;
    },

    /**
     * Enrolls an app in the actor's tenant. The key defaults to the kebab-case of the name and
     * must be free; a child tenant, when asked for, is created first (the caller becomes its
     * `tenant-admin`), under the company tenant or under `parentTenant`, a tenant below it that
     * the caller also manages.
     */
    async create(actor: Actor, input: CreateAppInput): Promise<App> {
      const key = input.key ?? kebabCase(input.name);
      if (!key) throw ValidationError.field('key', 'cannot be derived from the name; give a kebab-case key');
      if (await db.inTenant(actor.tenantId, (tx) => findAppByKey(tx, key))) throw keyTaken(key);

      let child: Tenant | undefined;
      if (input.childTenant) {
        const slug = input.childTenant.slug ?? kebabCase(input.childTenant.name);
        const slugIssue = childSlugIssue(slug);
        if (slugIssue) throw ValidationError.field('childTenant.slug', slugIssue);
        const parentId = await (async () => {
          if (!input.parentTenant) return actor.tenantId;
          const parent = await tenants.find(input.parentTenant);
          if (!parent || !(await tenants.isWithin(parent.id, actor.tenantId))) throw new NotFoundError(`parent tenant "${input.parentTenant}"`);
          if (parent.id !== actor.tenantId && !(await identity.permissionsIn(actor.userId, parent.id))?.includes('tenants.manage')) {
            throw new ForbiddenError(`missing permission tenants.manage in tenant "${input.parentTenant}"`);
          }
          return parent.id;
        })();
        child = await tenants
          .createChildOf(
            parentId,
            { name: input.childTenant.name, slug, domains: [], usecase: 'generic', starterTemplate: input.template ?? DEFAULT_STARTER_TEMPLATE },
            actor.userId,
          )
          .catch((error: unknown) => {
            // The slug came in as childTenant.slug (or from childTenant.name): named as the request names it.
            if (error instanceof ConflictError && error.details?.field === 'slug') throw new ConflictError(error.message, { field: 'childTenant.slug' });
            throw error;
          });
      }
      const app = await db.inTenant(actor.tenantId, (tx) => insertApp(tx, appData({ ...input, key }, child), actor.userId));
      if (!app) throw keyTaken(key);
      return app;
    },
  };
}
