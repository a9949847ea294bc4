import type { Tx } from '../db/client.ts';
import { APP_OBJECT_TYPE, type App, type AppData } from './apps.schema.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { recordVersion } from '../resources/resource-ops.ts';

/** An enrollment row shaped as the App record. */
const APP_COLUMNS = `id::text as id, data ->> 'key' as key, data ->> 'name' as name, data ->> 'template' as template,
  data ->> 'source' as source, data ->> 'appUrl' as "appUrl", data ->> 'status' as status,
  tenant_id::text as "companyTenantId", data ->> 'childTenantId' as "childTenantId", data ->> 'childTenantSlug' as "childTenantSlug",
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** What a write returns beside the App: the resource's version and data, for its history entry. */
const WRITTEN_COLUMNS = `${APP_COLUMNS}, version, data`;
type WrittenApp = App & { version: number; data: Record<string, unknown> };

/**
 * The App of a written row, its change appended to the resource's history as the resource engine
 * does (control-plane/resources/resource-ops.ts): enrollments are resources too, and their
 * history lists every change.
 */
async function recorded(tx: Tx, row: WrittenApp, operation: 'create' | 'update' | 'delete', actor: string | null): Promise<App> {
  const { version, data, ...app } = row;
  await recordVersion(tx, { id: row.id, type: APP_OBJECT_TYPE, version: operation === 'delete' ? version + 1 : version, operation, data, actor });
  return app;
}

/** The current tenant's app with this key. */
export async function findAppByKey(tx: Tx, key: string): Promise<App | undefined> {
  const rows = await tx.unsafe<App[]>(
    `select ${APP_COLUMNS} from resources where tenant_id = current_tenant_id() and type = '${APP_OBJECT_TYPE}' and data ->> 'key' = $1`,
    [key],
    { prepare: true },
  );
  return rows[0];
}

/** Platform work: the enrollments, in any tenant, of apps with this key whose child tenant is `childTenantId`. */
export async function findAppsOfChildTenant(tx: Tx, childTenantId: string, key: string): Promise<App[]> {
  return tx.unsafe<App[]>(
    `select ${APP_COLUMNS} from resources where type = '${APP_OBJECT_TYPE}' and data ->> 'key' = $1 and data ->> 'childTenantId' = $2`,
    [key, childTenantId],
    { prepare: true },
  );
}

/** Inserts an app in the current tenant; `undefined` when its key is taken. */
export async function insertApp(tx: Tx, data: AppData, createdBy: string | null): Promise<App | undefined> {
  const rows = await tx.unsafe<WrittenApp[]>(
    `insert into resources (tenant_id, type, data, created_by, created_at, updated_at)
     values (current_tenant_id(), '${APP_OBJECT_TYPE}', $1::text::jsonb, $2::uuid, ${NOW_MS}, ${NOW_MS})
     on conflict (tenant_id, (data ->> 'key')) where type = '${APP_OBJECT_TYPE}' do nothing
     returning ${WRITTEN_COLUMNS}`,
    [JSON.stringify(data), createdBy],
    { prepare: true },
  );
  return rows[0] && recorded(tx, rows[0], 'create', createdBy);
}

/** Replaces an app's data when it differs; returns the stored app. */
export async function writeAppData(tx: Tx, id: string, data: AppData, by: string | null): Promise<App> {
  const rows = await tx.unsafe<WrittenApp[]>(
    `update resources set data = $2::text::jsonb, version = version + 1, updated_at = ${NOW_MS}
     where tenant_id = current_tenant_id() and type = '${APP_OBJECT_TYPE}' and id = $1::uuid and data <> $2::text::jsonb
     returning ${WRITTEN_COLUMNS}`,
    [id, JSON.stringify(data)],
    { prepare: true },
  );
  if (rows[0]) return recorded(tx, rows[0], 'update', by);
  return (await tx.unsafe<App[]>(`select ${APP_COLUMNS} from resources where tenant_id = current_tenant_id() and id = $1::uuid`, [id], { prepare: true }))[0]!;
}

export async function deleteApp(tx: Tx, id: string, by: string | null): Promise<void> {
  const rows = await tx.unsafe<WrittenApp[]>(
    `delete from resources where tenant_id = current_tenant_id() and type = '${APP_OBJECT_TYPE}' and id = $1::uuid returning ${WRITTEN_COLUMNS}`,
    [id],
    { prepare: true },
  );
  if (rows[0]) await recorded(tx, rows[0], 'delete', by);
}
