import type { Db } from '../db/client.ts';
import { appSubject, type DeclaringObject } from '../declarations/declarations.schema.ts';
import type { DeclarationsService } from '../declarations/declarations.service.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { KeyedResources } from '../resources/keyed-resources.ts';
import { DEFAULT_STARTER_TEMPLATE, type Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsDeclared } from '../tenants/tenants.declared.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import { appData, appRecords } from './app-records.ts';
import type { App, AppDeclaration } from './apps.schema.ts';

export type AppsDeclared = ReturnType<typeof createAppsDeclared>;

/**
 * Apps as Kubernetes objects declare them, for the operator: declared and removed idempotently,
 * claimed by the declaring object, their child tenants declared through the tenants domain.
 */
export function createAppsDeclared(deps: {
  db: Db;
  tenants: Pick<TenantsService, 'find' | 'isWithin'> & Pick<TenantsDeclared, 'declare' | 'removeDeclared'>;
  declarations: DeclarationsService;
  /** The enrollment resources (the resources domain writes them, with their history). */
  enrollments: KeyedResources;
}) {
  const { db, tenants, declarations } = deps;
  const { findAppByKey, insertApp, writeAppData, deleteApp } = appRecords(deps.enrollments);

  return {
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
