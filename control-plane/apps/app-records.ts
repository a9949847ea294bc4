import type { Tx } from '../db/client.ts';
import type { KeyedResource, KeyedResources } from '../resources/keyed-resources.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { App, AppData } from './apps.schema.ts';

/** The enrollment's stored fields, without absent optional ones. */
export function appData(fields: Omit<AppData, 'childTenantId' | 'childTenantSlug'>, child: Tenant | undefined): AppData {
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

/** The App record of an enrollment resource. */
function toApp(row: KeyedResource): App {
  const text = (name: keyof AppData): string | null => {
    const value = row.data[name];
    return typeof value === 'string' ? value : null;
  };
  return {
    id: row.id,
    key: text('key')!,
    name: text('name')!,
    template: text('template'),
    source: text('source')!,
    appUrl: text('appUrl'),
    status: text('status') as App['status'],
    companyTenantId: row.tenantId,
    childTenantId: text('childTenantId'),
    childTenantSlug: text('childTenantSlug'),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Apps kept as enrollment resources: the resources domain owns the table and writes the rows, with
 * their history, through the `enrollments` port the wiring passes the apps service.
 */
export function appRecords(enrollments: KeyedResources) {
  return {
    /** The current tenant's app with this key. */
    async findAppByKey(tx: Tx, key: string): Promise<App | undefined> {
      const row = await enrollments.findByKey(tx, key);
      return row && toApp(row);
    },

    /** Platform work: the enrollments, in any tenant, of apps with this key whose child tenant is `childTenantId`. */
    async findAppsOfChildTenant(tx: Tx, childTenantId: string, key: string): Promise<App[]> {
      return (await enrollments.findAnywhere(tx, { key, childTenantId })).map(toApp);
    },

    /** Inserts an app in the current tenant; `undefined` when its key is taken. */
    async insertApp(tx: Tx, data: AppData, createdBy: string | null): Promise<App | undefined> {
      const row = await enrollments.insert(tx, { ...data }, createdBy);
      return row && toApp(row);
    },

    /** Replaces an app's data when it differs; returns the stored app. */
    async writeAppData(tx: Tx, id: string, data: AppData, by: string | null): Promise<App> {
      return toApp(await enrollments.replaceData(tx, id, { ...data }, by));
    },

    async deleteApp(tx: Tx, id: string, by: string | null): Promise<void> {
      await enrollments.delete(tx, id, by);
    },
  };
}
