import type { Db } from '../db/client.ts';
import { appSubject, type DeclaringObject } from '../declarations/declarations.schema.ts';
import type { DeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { DEFAULT_STARTER_TEMPLATE, type Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsDeclared } from '../tenants/tenants.declared.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import type { KeyedResources } from '../resources/keyed-resources.ts';
import { appRecords } from './app-records.ts';
import { childSlugIssue, kebabCase, type App, type AppData, type AppDeclaration, type CreateAppInput } from './apps.schema.ts';

export type AppsService = ReturnType<typeof createAppsService>;

const keyTaken = (key: string) => new ConflictError(`app key "${key}" is already taken in this tenant`, { field: 'key' });

/** The enrollment's stored fields, without absent optional ones. */
function appData(fields: Omit<AppData, 'childTenantId' | 'childTenantSlug'>, child: Tenant | undefined): AppData {
  return {
    key: fields.key,
    name: fields.name,
    ...(fields.template ? { template: fields.template } : {}),
    source: fields.source,
    ...(fields.appUrl ? { appUrl: fields.appUrl } : {}),
    status: fields.status,
    ...(child ? { childTenantId: child.id, childTenantSlug: child.slug } : {}),
  };
}

/**
 * App (vertical) enrollments of a company tenant, kept as `tenant-vertical-enrollment` resources
 * there. An app may bring a child tenant, created through the tenants service like any other
 * child (so it is provisioned by the same workflow). v4 creates apps; the operator declares them.
 */
export function createAppsService(deps: {
  db: Db;
  tenants: Pick<TenantsService, 'createChildOf' | 'find' | 'isWithin'> & Pick<TenantsDeclared, 'declare' | 'removeDeclared'>;
  identity: Pick<IdentityService, 'permissionsIn'>;
  declarations: DeclarationsService;
  /** The enrollment resources (the resources domain writes them, with their history). */
  enrollments: KeyedResources;
}) {
  const { db, tenants, identity, declarations } = deps;
  const { findAppByKey, findAppsOfChildTenant, insertApp, writeAppData, deleteApp } = appRecords(deps.enrollments);

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

    /**
     * Brings the app a declaration describes to that state, for the operator: its child tenant
     * declared under the company tenant or `parentTenant`, a tenant below it (a tenant with that
     * slug must already be a child of that parent), the enrollment
     * inserted or updated. Idempotent. The company tenant must exist.
     */
    async declare(declaration: AppDeclaration): Promise<{ app: App; company: Tenant; child?: Tenant }> {
      if (!declaration.name) throw ValidationError.field('name', 'must not be empty');
      const company = await tenants.find(declaration.companyTenant);
      if (!company) throw new NotFoundError(`company tenant "${declaration.companyTenant}"`);
      const { declaredBy } = declaration;
      // Claimed by its key before anything is written, so another App's declaration is refused
      // before it touches the enrollment or creates a child tenant.
      if (declaredBy) await db.system((tx) => declarations.claim(tx, appSubject(company.id, declaration.key), `app "${declaration.key}" of "${company.slug}"`, declaredBy));
      let child: Tenant | undefined;
      if (declaration.childTenant) {
        const parent = declaration.parentTenant ? await tenants.find(declaration.parentTenant) : company;
        if (!parent || !(await tenants.isWithin(parent.id, company.id))) throw new NotFoundError(`parent tenant "${declaration.parentTenant}" below "${company.slug}"`);
        const existing = await tenants.find(declaration.childTenant.slug);
        if (existing && existing.parentId !== parent.id) {
          throw new ConflictError(`tenant "${declaration.childTenant.slug}" exists and is not a child of "${parent.slug}"`, { field: 'childTenant.slug' });
        }
        child = await tenants.declare({
          slug: declaration.childTenant.slug,
          name: declaration.childTenant.name,
          parent: parent.slug,
          domains: existing?.domains ?? [],
          usecase: existing?.usecase ?? 'generic',
          industry: existing?.industry ?? undefined,
          starterTemplate: declaration.template ?? DEFAULT_STARTER_TEMPLATE,
          declaredBy,
        });
      }
      const data = appData(declaration, child);
      const app = await db.inTenant(company.id, async (tx) => {
        const current = await findAppByKey(tx, declaration.key);
        if (current) return writeAppData(tx, current.id, data, null);
        return (await insertApp(tx, data, null)) ?? (await findAppByKey(tx, declaration.key))!;
      });
      return { app, company, child };
    },

    /**
     * Removes a declared app and soft-deletes its child tenant, for the operator; an app already
     * gone is fine, and one that another Kubernetes object declares is left alone.
     */
    async removeDeclared(companyTenant: string, key: string, declaredBy?: DeclaringObject): Promise<void> {
      const company = await tenants.find(companyTenant);
      if (!company) return;
      const subject = appSubject(company.id, key);
      if (declaredBy && !(await db.system((tx) => declarations.holds(tx, subject, declaredBy)))) return;
      const app = await db.inTenant(company.id, (tx) => findAppByKey(tx, key));
      if (app) {
        // Only a tenant below the company tenant is ever an app's child: whatever the enrollment
        // says, no other tenant is deleted with the app.
        const named = app.childTenantSlug ? await tenants.find(app.childTenantSlug) : undefined;
        const child = named && named.id !== company.id && (await tenants.isWithin(named.id, company.id)) ? named : undefined;
        if (child) await tenants.removeDeclared(child.slug, declaredBy);
        await db.inTenant(company.id, (tx) => deleteApp(tx, app.id, null));
      }
      // Last, so that until the app is gone no other App can claim its key.
      if (declaredBy) await db.system((tx) => declarations.forget(tx, subject, declaredBy));
    },
  };
}
