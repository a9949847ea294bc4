import type { PendingQuery } from 'postgres';
import type { Tx } from '../db/client.ts';
import type { Resource } from './resources.schema.ts';
import type { SqlText } from '../query/sql-text.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';


/** Columns of a resource row, shaped as the domain record (timestamps as ISO strings). */
export const RESOURCE_COLUMNS = `id::text as id, type, data, version, created_by::text as "createdBy", updated_by::text as "updatedBy",
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** The statement that GET-by-id runs; exported so benchmarks replay exactly this SQL. */
export const GET_RESOURCE_SQL = `select ${RESOURCE_COLUMNS} from resources where tenant_id = current_tenant_id() and type = $1 and id = $2::uuid`;

/** Only a UUID can name a resource; any other id names none. */
export const isResourceId = (id: string) => UUID.test(id);

/** The GET-by-id statement, not yet sent; `id` must be a resource id (`isResourceId`). */
export function selectResource(tx: Tx, type: string, id: string) {
  return tx.unsafe<Resource[]>(GET_RESOURCE_SQL, [type, id], { prepare: true });
}

export async function findResource(tx: Tx, type: string, id: string, forUpdate = false): Promise<Resource | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<Resource[]>(forUpdate ? `${GET_RESOURCE_SQL} for update` : GET_RESOURCE_SQL, [type, id], { prepare: true });
  return rows[0];
}

/** A page of the type's resources in id order, after `after` (a walk over all of them). */
export async function resourcesAfter(tx: Tx, type: string, after: string | null, limit: number): Promise<Resource[]> {
  return tx.unsafe<Resource[]>(
    `select ${RESOURCE_COLUMNS} from resources where tenant_id = current_tenant_id() and type = $1 and ($2::uuid is null or id > $2::uuid) order by id limit $3`,
    [type, after, limit] as never[],
    { prepare: true },
  );
}

/** Where a walk in creation order stands: the last row's `created_at` exactly (as text) and id. */
export interface CreationCursor {
  createdAt: string;
  id: string;
}

/**
 * A page of the current tenant's resources of `type` in creation order, after `after`: the range
 * of index `resources_tenant_type_created` from the cursor, so that a walk over a million rows reads
 * each page at the cost of one (ordering by id alone would sort every row for each page).
 */
export async function resourcesCreatedAfter(
  tx: Tx,
  type: string,
  after: CreationCursor | null,
  limit: number,
): Promise<{ page: { id: string; data: Record<string, unknown> }[]; next: CreationCursor | null }> {
  // Two statements, not one with `$2 is null or ...`: a prepared statement's generic plan could not
  // start the range at the cursor.
  const columns = `id::text as id, data, created_at::text as "createdAt"`;
  const rows = await (after
    ? tx.unsafe<{ id: string; data: Record<string, unknown>; createdAt: string }[]>(
        `select ${columns} from resources where tenant_id = current_tenant_id() and type = $1 and (created_at, id) > ($2::text::timestamptz, $3::uuid)
          order by created_at, id limit $4`,
        [type, after.createdAt, after.id, limit],
        { prepare: true },
      )
    : tx.unsafe<{ id: string; data: Record<string, unknown>; createdAt: string }[]>(
        `select ${columns} from resources where tenant_id = current_tenant_id() and type = $1 order by created_at, id limit $2`,
        [type, limit],
        { prepare: true },
      ));
  const last = rows.at(-1);
  return { page: rows.map(({ id, data }) => ({ id, data })), next: rows.length === limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** The tenants that hold resources of `type` (a loose scan of `resources_tenant_type_created`: one probe per tenant). */
export async function tenantsWithResourcesOf(tx: Tx, type: string): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    with recursive t (id) as (
      (select tenant_id from resources where type = ${type} order by tenant_id limit 1)
      union all
      select (select r.tenant_id from resources r where r.tenant_id > t.id and r.type = ${type} order by r.tenant_id limit 1)
        from t where t.id is not null
    )
    select id::text as id from t where id is not null`;
  return rows.map((r) => r.id);
}

export async function insertResource(tx: Tx, type: string, data: Record<string, unknown>, createdBy: string): Promise<Resource> {
  const rows = await tx.unsafe<Resource[]>(
    `insert into resources (tenant_id, type, data, created_by, updated_by, created_at, updated_at)
     values (current_tenant_id(), $1, $2::text::jsonb, $3::uuid, $3::uuid, ${NOW_MS}, ${NOW_MS}) returning ${RESOURCE_COLUMNS}`,
    [type, JSON.stringify(data), createdBy],
    { prepare: true },
  );
  return rows[0]!;
}

/** Inserts a resource with a caller-chosen id unless it exists already; returns the stored row either way, and whether this call inserted it. */
export async function insertResourceOnce(
  tx: Tx,
  id: string,
  type: string,
  data: Record<string, unknown>,
  createdBy: string,
): Promise<{ resource: Resource | undefined; inserted: boolean }> {
  const rows = await tx.unsafe<Resource[]>(
    `insert into resources (id, tenant_id, type, data, created_by, updated_by, created_at, updated_at)
     values ($1::uuid, current_tenant_id(), $2, $3::text::jsonb, $4::uuid, $4::uuid, ${NOW_MS}, ${NOW_MS})
     on conflict (id) do nothing returning ${RESOURCE_COLUMNS}`,
    [id, type, JSON.stringify(data), createdBy],
    { prepare: true },
  );
  return rows[0] ? { resource: rows[0], inserted: true } : { resource: await findResource(tx, type, id), inserted: false };
}

/** Writes new data and bumps the version; undefined when the row is gone or its version moved on. */
export async function writeResourceData(
  tx: Tx,
  type: string,
  id: string,
  data: Record<string, unknown>,
  expectedVersion: number | undefined,
  updatedBy: string | null,
): Promise<Resource | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<Resource[]>(
    `update resources set data = $3::text::jsonb, version = version + 1, updated_at = ${NOW_MS}, updated_by = $5::uuid
     where tenant_id = current_tenant_id() and type = $1 and id = $2::uuid and ($4::text is null or version = $4::text::int)
     returning ${RESOURCE_COLUMNS}`,
    [type, id, JSON.stringify(data), expectedVersion === undefined ? null : String(expectedVersion), updatedBy],
    { prepare: true },
  );
  return rows[0];
}

/**
 * The statement of a PUT at a version whose type was checked before its transaction: the update
 * applies only while that type is still at the version the data was validated against (and
 * published), and its history entry goes with it, so that the write is one statement. No row when
 * nothing was written: the resource is gone or at another version, or the type changed.
 * Parameters: type, id, data, version (NULL: any), actor, the type's id and version.
 */
export const REPLACE_AT_TYPE_VERSION_SQL = `with written as (
    update resources set data = $3::text::jsonb, version = version + 1, updated_at = ${NOW_MS}, updated_by = $5::uuid
     where tenant_id = current_tenant_id() and type = $1 and id = $2::uuid and ($4::text is null or version = $4::text::int)
       and exists (select 1 from object_type_catalog t where t.id = $6::uuid and t.version = $7::int and t.status = 'published')
     returning *
  ), recorded as (
    insert into resource_versions (tenant_id, resource_id, type, version, operation, data, actor, at)
    select tenant_id, id, type, version, 'update', data, updated_by, updated_at from written
  )
  select ${RESOURCE_COLUMNS} from written`;

/**
 * REPLACE_AT_TYPE_VERSION_SQL, unsent (`Db.writeInTenant` sends it in a transaction of its own):
 * its one row is the resource as written, none when it wrote nothing. `id` must be a resource id.
 */
export function replaceAtTypeVersion(
  tx: Tx,
  objectType: { key: string; objectTypeId: string; version: number },
  id: string,
  data: Record<string, unknown>,
  expectedVersion: number,
  updatedBy: string | null,
): PendingQuery<Resource[]> {
  return tx.unsafe<Resource[]>(
    REPLACE_AT_TYPE_VERSION_SQL,
    [objectType.key, id, JSON.stringify(data), String(expectedVersion), updatedBy, objectType.objectTypeId, objectType.version],
    { prepare: true },
  );
}

/** Deletes the resource; returns the row as it was, or undefined when there was none. */
export async function deleteResource(tx: Tx, type: string, id: string): Promise<Resource | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<Resource[]>(`delete from resources where tenant_id = current_tenant_id() and type = $1 and id = $2::uuid returning ${RESOURCE_COLUMNS}`, [type, id], {
    prepare: true,
  });
  return rows[0];
}

export interface ListRow extends Resource {
  [key: `k${number}`]: string | null;
}

/** A list's page rows. Issued beside the statements below, it shares their round trip (postgres.js pipelines them). */
export async function selectListPage(tx: Tx, page: SqlText): Promise<ListRow[]> {
  return tx.unsafe<ListRow[]>(page.text, page.values as never[], { prepare: true });
}

/**
 * A list's exact total, the snapshot it was counted in (`pg_snapshot` text), and whether the
 * transaction had written nothing then: only such a total holds for other transactions.
 */
export async function selectListTotal(tx: Tx, count: SqlText): Promise<{ total: number; snapshot: string; unwritten: boolean }> {
  const [row] = await tx.unsafe<{ total: number; snapshot: string; unwritten: boolean }[]>(
    `select counted.total, pg_current_snapshot()::text as snapshot, pg_current_xact_id_if_assigned() is null as unwritten from (${count.text}) counted`,
    count.values as never[],
    { prepare: true },
  );
  return { total: Number(row!.total), snapshot: row!.snapshot, unwritten: row!.unwritten };
}

/** At most `bound + 1` of a list's matching rows counted: an index walk that stops, however many match. */
export function boundedCount(matching: SqlText, bound: number): SqlText {
  return { text: `select count(*)::int as total from (${matching.text} limit ${Math.trunc(bound) + 1}) bounded`, values: matching.values };
}

/** PostgreSQL's estimate of how many rows a list matches (its plan's row count), without reading them. */
export async function estimateListTotal(tx: Tx, matching: SqlText): Promise<number> {
  const [row] = await tx.unsafe<Array<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>>(`explain (format json) ${matching.text}`, matching.values as never[]);
  return Math.round(row?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * Whether a change of `types` has committed that a snapshot (`$2`) did not see: each change's
 * history entry holds its transaction (`xid`), and only transactions from the snapshot's oldest
 * running one on can be unseen, so the index reads only the newest entries. The range's upper
 * bound (what this statement's own snapshot can see) excludes nothing; bounded on both sides, the
 * range is one the prepared statement's generic plan expects to be narrow, and so reads by the index.
 */
export const CHANGED_SINCE_SQL = `select exists (select 1 from resource_versions where tenant_id = current_tenant_id() and type = any($1::text[])
  and xid >= pg_snapshot_xmin($2::text::pg_snapshot) and xid < pg_snapshot_xmax(pg_current_snapshot())
  and not pg_visible_in_snapshot(xid, $2::text::pg_snapshot)) as changed`;

export async function changedSince(tx: Tx, types: readonly string[], snapshot: string): Promise<boolean> {
  const [row] = await tx.unsafe<{ changed: boolean }[]>(CHANGED_SINCE_SQL, [[...types], snapshot] as never[], { prepare: true });
  return row!.changed;
}

/** Locks the resources among `ids` that the tenant has of this type, in id order, so that writers of overlapping sets never deadlock. */
export async function lockResources(tx: Tx, type: string, ids: readonly string[]): Promise<void> {
  const uuids = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  if (uuids.length === 0) return;
  await tx.unsafe(`select id from resources where tenant_id = current_tenant_id() and type = $1 and id = any($2::uuid[]) order by id for update`, [type, uuids], {
    prepare: true,
  });
}
