import type { Sql } from 'postgres';
import { cancellingOnAbort, type Tx } from '../db/client.ts';
import type { IndexSpec } from './indexes.ts';
import type { StorageBackend, StorageLocation, StorageStatusValue } from './storage.schema.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';

export interface StorageRow {
  backend: StorageBackend;
  status: Exclude<StorageStatusValue, 'not_provisioned'>;
  location: StorageLocation;
  error: string | null;
  provisionedAt: string | null;
  updatedAt: string;
}

// Tenant-scoped statements (run inside `db.inTenant`; row-level security limits them to the tenant).

export async function listStorageRows(tx: Tx): Promise<StorageRow[]> {
  return tx.unsafe<StorageRow[]>(
    `select backend, status, location, error, ${isoTimestamp('provisioned_at')} as "provisionedAt", ${isoTimestamp('updated_at')} as "updatedAt"
     from tenant_storage where tenant_id = current_tenant_id() order by backend`,
    [],
    { prepare: true },
  );
}

/** Marks backends `provisioning` unless they are already `ready`. */
export async function markProvisioning(tx: Tx, backend: StorageBackend, location: StorageLocation): Promise<void> {
  await tx.unsafe(
    `insert into tenant_storage (tenant_id, backend, status, location) values (current_tenant_id(), $1, 'provisioning', $2::text::jsonb)
     on conflict (tenant_id, backend) do update set status = 'provisioning', error = null, updated_at = ${NOW_MS}
     where tenant_storage.status <> 'ready'`,
    [backend, JSON.stringify(location)],
    { prepare: true },
  );
}

/** Records a backend `ready` at `location`; a row that already says so is left untouched. */
export async function recordReady(tx: Tx, backend: StorageBackend, location: StorageLocation): Promise<void> {
  await tx.unsafe(
    `insert into tenant_storage (tenant_id, backend, status, location, provisioned_at) values (current_tenant_id(), $1, 'ready', $2::text::jsonb, ${NOW_MS})
     on conflict (tenant_id, backend) do update set status = 'ready', location = excluded.location, error = null,
       provisioned_at = case when tenant_storage.status = 'ready' then tenant_storage.provisioned_at else excluded.provisioned_at end,
       updated_at = ${NOW_MS}
     where tenant_storage.status <> 'ready' or tenant_storage.location <> excluded.location`,
    [backend, JSON.stringify(location)],
    { prepare: true },
  );
}

export async function recordFailed(tx: Tx, backend: StorageBackend, location: StorageLocation, error: string): Promise<void> {
  await tx.unsafe(
    `insert into tenant_storage (tenant_id, backend, status, location, error) values (current_tenant_id(), $1, 'failed', $2::text::jsonb, $3)
     on conflict (tenant_id, backend) do update set status = 'failed', error = excluded.error, updated_at = ${NOW_MS}`,
    [backend, JSON.stringify(location), error],
    { prepare: true },
  );
}

/**
 * Object types the tenant sees: its own, and the built-in ones it does not shadow with its own; with
 * the fields each declares in `indexes`. A built-in type's indexes are shared by every tenant and
 * built by the migrations (builtin-indexes.ts), so none is the tenant's to build.
 */
export async function visibleObjectTypes(tx: Tx): Promise<Array<{ name: string; schema: object; indexes: string[] }>> {
  return tx.unsafe<Array<{ name: string; schema: object; indexes: string[] }>>(
    `select distinct on (key) key as name, schema, case when tenant_id is null then '[]'::jsonb else indexes end as indexes from object_type_catalog
     where tenant_id = current_tenant_id() or tenant_id is null
     order by key, tenant_id nulls last`,
    [],
    { prepare: true },
  );
}

export interface IndexClaim {
  indexName: string;
  objectType: string;
  field: string;
  expression: string;
}

export async function listIndexClaims(tx: Tx): Promise<IndexClaim[]> {
  return tx.unsafe<IndexClaim[]>(
    `select index_name as "indexName", object_type as "objectType", field, expression from tenant_storage_indexes
     where tenant_id = current_tenant_id() order by index_name`,
    [],
    { prepare: true },
  );
}

export async function insertIndexClaim(tx: Tx, spec: IndexSpec): Promise<void> {
  await tx.unsafe(
    `insert into tenant_storage_indexes (tenant_id, index_name, object_type, field, expression) values (current_tenant_id(), $1, $2, $3, $4)
     on conflict (tenant_id, index_name) do nothing`,
    [spec.name, spec.objectType, spec.field, spec.expression],
    { prepare: true },
  );
}

export async function deleteIndexClaim(tx: Tx, indexName: string): Promise<void> {
  await tx.unsafe(`delete from tenant_storage_indexes where tenant_id = current_tenant_id() and index_name = $1`, [indexName], { prepare: true });
}

export async function listCollections(tx: Tx): Promise<Array<{ name: string; documents: number }>> {
  return tx.unsafe<Array<{ name: string; documents: number }>>(
    `select c.name, (select count(*)::int from docstore_documents d where d.tenant_id = c.tenant_id and d.collection = c.name) as documents
     from docstore_collections c where c.tenant_id = current_tenant_id() order by c.name`,
    [],
    { prepare: true },
  );
}

export async function ensureCollection(tx: Tx, name: string): Promise<void> {
  await tx.unsafe(`insert into docstore_collections (tenant_id, name) values (current_tenant_id(), $1) on conflict do nothing`, [name], { prepare: true });
}

/** Text the search projection takes from a resource: a title, and every string value of its data. */
const PROJECTED = `coalesce(r.data ->> 'name', r.data ->> 'title', '') as title,
  coalesce((select string_agg(v #>> '{}', ' ') from jsonb_path_query(r.data, 'strict $.**') v where jsonb_typeof(v) = 'string'), '') as body`;
const STALE = `(p.source_version <> r.version or p.source_updated_at <> r.updated_at or p.object_type <> r.type)`;

export interface ProjectionDelta {
  resources: number;
  missing: number;
  stale: number;
  orphaned: number;
}

/** How the tenant's search projection differs from its resources. */
export async function projectionDelta(tx: Tx): Promise<ProjectionDelta> {
  const [row] = await tx.unsafe<ProjectionDelta[]>(
    `select
       (select count(*)::int from resource_rows r where r.tenant_id = current_tenant_id()) as resources,
       (select count(*)::int from resource_rows r left join search_projections p
          on p.tenant_id = r.tenant_id and p.source_type = 'resource' and p.source_id = r.id
        where r.tenant_id = current_tenant_id() and p.source_id is null) as missing,
       (select count(*)::int from resource_rows r join search_projections p
          on p.tenant_id = r.tenant_id and p.source_type = 'resource' and p.source_id = r.id
        where r.tenant_id = current_tenant_id() and ${STALE}) as stale,
       (select count(*)::int from search_projections p
        where p.tenant_id = current_tenant_id() and p.source_type = 'resource'
          and not exists (select 1 from resource_rows r where r.tenant_id = p.tenant_id and r.id = p.source_id)) as orphaned`,
    [],
    { prepare: true },
  );
  return row!;
}

/** Projects resources that have no projection or a stale one; returns how many rows were created and updated. */
export async function projectResources(tx: Tx): Promise<{ created: number; updated: number }> {
  const rows = await tx.unsafe<Array<{ created: boolean }>>(
    `insert into search_projections (tenant_id, source_type, source_id, object_type, title, body, source_version, source_updated_at, projected_at)
     select r.tenant_id, 'resource', r.id, r.type, ${PROJECTED}, r.version, r.updated_at, ${NOW_MS}
     from resource_rows r left join search_projections p on p.tenant_id = r.tenant_id and p.source_type = 'resource' and p.source_id = r.id
     where r.tenant_id = current_tenant_id() and (p.source_id is null or ${STALE})
     on conflict (tenant_id, source_type, source_id) do update set object_type = excluded.object_type, title = excluded.title,
       body = excluded.body, source_version = excluded.source_version, source_updated_at = excluded.source_updated_at,
       projected_at = excluded.projected_at, embedding = null, embedding_model = null
     returning (xmax = 0) as created`,
    [],
    { prepare: true },
  );
  const created = rows.filter((r) => r.created).length;
  return { created, updated: rows.length - created };
}

/** Serialises the tenant's whole-projection runs (sync and rebuild) until the transaction ends: two never interleave their deletes and upserts. */
export async function lockProjections(tx: Tx): Promise<void> {
  await tx.unsafe(`select pg_advisory_xact_lock(hashtext('svc-search-projection:' || current_tenant_id()::text))`, [], { prepare: true });
}

export async function deleteOrphanedProjections(tx: Tx): Promise<number> {
  const rows = await tx.unsafe(
    `delete from search_projections p where p.tenant_id = current_tenant_id() and p.source_type = 'resource'
       and not exists (select 1 from resource_rows r where r.tenant_id = p.tenant_id and r.id = p.source_id)
     returning 1`,
    [],
    { prepare: true },
  );
  return rows.length;
}

export async function deleteResourceProjections(tx: Tx): Promise<number> {
  const rows = await tx.unsafe(`delete from search_projections where tenant_id = current_tenant_id() and source_type = 'resource' returning 1`, [], {
    prepare: true,
  });
  return rows.length;
}

export async function countProjections(tx: Tx): Promise<{ total: number; embedded: number }> {
  const [row] = await tx.unsafe<Array<{ total: number; embedded: number }>>(
    `select count(*)::int as total, count(embedding)::int as embedded from search_projections where tenant_id = current_tenant_id()`,
    [],
    { prepare: true },
  );
  return row!;
}

// Platform statements (run as the owner: catalogs, tenants, the physical indexes).

export async function findTenant(tx: Tx, tenantId: string): Promise<{ status: string; deleted: boolean } | undefined> {
  const rows = await tx<Array<{ status: string; deleted: boolean }>>`
    select status, deleted_at is not null as deleted from tenant_directory where id = ${tenantId}::uuid`;
  return rows[0];
}

export async function currentDatabase(tx: Tx): Promise<{ database: string; schema: string }> {
  const [row] = await tx<Array<{ database: string; schema: string }>>`select current_database() as database, current_schema() as schema`;
  return row!;
}

export interface TableIsolation {
  table: string;
  exists: boolean;
  rowSecurity: boolean;
  /** Policies whose condition names the transaction's tenant (`current_tenant_id()`). */
  tenantPolicies: number;
  ownedByAppRole: boolean;
}

/** Row-level security of `tables`, or of every table of the schema with a `tenant_id` column when `tables` is omitted. */
export async function tableIsolation(tx: Tx, tables?: readonly string[]): Promise<TableIsolation[]> {
  return tx.unsafe<TableIsolation[]>(
    `with wanted as (
       select coalesce($1::text[], array(
         select c.relname::text from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
         where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
       )) as names
     )
     select w.name as "table", c.oid is not null as exists, coalesce(c.relrowsecurity, false) as "rowSecurity",
       (select count(*)::int from pg_policies p where p.schemaname = current_schema() and p.tablename = w.name
          and (p.qual like '%current_tenant_id()%' or p.with_check like '%current_tenant_id()%')) as "tenantPolicies",
       coalesce(pg_get_userbyid(c.relowner) = 'svc_app', false) as "ownedByAppRole"
     from wanted, unnest(wanted.names) as w(name)
     left join pg_class c on c.relname = w.name and c.relnamespace = current_schema()::regnamespace
     order by w.name`,
    [tables ? [...tables] : null] as never[],
  );
}

export async function appRole(tx: Tx): Promise<{ exists: boolean; bypassRls: boolean; superuser: boolean }> {
  const rows = await tx<Array<{ bypassRls: boolean; superuser: boolean }>>`
    select rolbypassrls as "bypassRls", rolsuper as superuser from pg_roles where rolname = 'svc_app'`;
  return rows[0] ? { exists: true, ...rows[0] } : { exists: false, bypassRls: false, superuser: false };
}

/**
 * The role a tenant connection logged in as (run in a tenant transaction), and whether it could
 * leave row-level security with `SET ROLE`: it is, or is a member of, a superuser, a role that
 * bypasses row-level security, or the tables' owner.
 */
export async function tenantLogin(tx: Tx): Promise<{ role: string; canLeaveRls: boolean }> {
  const [row] = await tx<[{ role: string; canLeaveRls: boolean }]>`
    select session_user::text as role, exists (
      select 1 from pg_roles r
      where pg_has_role(session_user, r.oid, 'MEMBER')
        and (r.rolsuper or r.rolbypassrls or r.oid = (select relowner from pg_class where oid = 'resources'::regclass))
    ) as "canLeaveRls"`;
  return row;
}

/**
 * Whether this connection's role (run on an owner connection) may cancel the statements of
 * connections logged in as `login`, as `pg_cancel_backend` judges it: with the privileges of that
 * role or of `pg_signal_backend`, or as a superuser.
 */
export async function mayCancelStatementsOf(tx: Tx, login: string): Promise<boolean> {
  const [row] = await tx<[{ may: boolean }]>`
    select pg_has_role(current_user, ${login}, 'USAGE') or pg_has_role(current_user, 'pg_signal_backend', 'USAGE')
      or (select rolsuper from pg_roles where rolname = current_user) as may`;
  return row.may;
}

/** Which of the named indexes exist in the current schema, and whether each is valid (a failed concurrent build leaves an invalid one). */
export async function physicalIndexes(tx: Tx, names: readonly string[]): Promise<Map<string, { valid: boolean }>> {
  if (names.length === 0) return new Map();
  const rows = await tx.unsafe<Array<{ name: string; valid: boolean }>>(
    `select c.relname as name, i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
     where c.relnamespace = current_schema()::regnamespace and c.relname = any($1::text[])`,
    [[...names]] as never[],
  );
  return new Map(rows.map((r) => [r.name, { valid: r.valid }]));
}

/** Whether an extended-statistics object of that name exists in the current schema. */
export async function hasStatistics(tx: Tx, name: string): Promise<boolean> {
  const rows = await tx.unsafe(`select 1 from pg_statistic_ext where stxnamespace = current_schema()::regnamespace and stxname = $1`, [name]);
  return rows.length > 0;
}

export async function columnExists(tx: Tx, table: string, column: string): Promise<boolean> {
  const rows = await tx`
    select 1 from pg_attribute where attrelid = to_regclass(${table}) and attname = ${column} and not attisdropped`;
  return rows.length > 0;
}

/**
 * Whether `#>>` (jsonb_extract_path_text) is LEAKPROOF. Under row-level security PostgreSQL uses a
 * condition as an index condition only when its functions are leakproof; built in, this one is not.
 */
export async function textAccessorLeakproof(tx: Tx): Promise<boolean> {
  const [row] = await tx<Array<{ leakproof: boolean }>>`
    select proleakproof as leakproof from pg_proc where oid = 'pg_catalog.jsonb_extract_path_text(jsonb, text[])'::regprocedure`;
  return row?.leakproof ?? false;
}

/** How many claims, of any tenant, index this expression (and so want its statistics). */
export async function countExpressionClaims(tx: Tx, expression: string): Promise<number> {
  const [row] = await tx<Array<{ claims: number }>>`select count(*)::int as claims from tenant_storage_indexes where expression = ${expression}`;
  return row!.claims;
}

/**
 * Platform work: the tenants that may have declared indexes still to build after a restart: those
 * with a claimed index that is missing or invalid (a build stopped half way), and those whose own
 * object types declare indexes (`indexes`, or `x-indexed` in the schema) that may never have started.
 */
export async function tenantsWithIndexWork(tx: Tx): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select distinct c.tenant_id::text as id from tenant_storage_indexes c
      left join pg_class i on i.relname = c.index_name and i.relnamespace = current_schema()::regnamespace
      left join pg_index x on x.indexrelid = i.oid
     where x.indexrelid is null or not x.indisvalid
    union
    select distinct tenant_id::text from object_type_catalog
     where tenant_id is not null and (jsonb_array_length(indexes) > 0 or schema::text like '%"x-indexed"%')
    order by id`;
  return rows.map((r) => r.id);
}

export async function countIndexClaims(tx: Tx, indexName: string): Promise<number> {
  const [row] = await tx<Array<{ claims: number }>>`select count(*)::int as claims from tenant_storage_indexes where index_name = ${indexName}`;
  return row!.claims;
}

/**
 * Runs `fn` on one owner connection holding a session advisory lock for `indexName`, outside any
 * transaction (as `create index concurrently` requires). Claims and builds of one index never
 * interleave. When `signal` aborts, the lock wait or the build is cancelled in PostgreSQL; the
 * unlock runs after that, never cancelled. With `unlessBusy`, `fn` is skipped when another
 * connection holds the lock, rather than waited for (answers whether `fn` ran).
 */
export async function withIndexLock(
  sql: Sql,
  indexName: string,
  fn: (connection: Sql) => Promise<void>,
  signal?: AbortSignal,
  options: { unlessBusy?: boolean } = {},
): Promise<boolean> {
  const key = `svc-storage-index:${indexName}`;
  const connection = await sql.reserve();
  try {
    return await cancellingOnAbort(sql, connection as unknown as Sql, signal, async () => {
      if (options.unlessBusy) {
        const [{ locked }] = await connection<[{ locked: boolean }]>`select pg_try_advisory_lock(hashtext(${key})) as locked`;
        if (!locked) return false;
      } else {
        await connection`select pg_advisory_lock(hashtext(${key}))`;
      }
      await fn(connection);
      return true;
    });
  } finally {
    // Unlocks nothing when the lock was never taken; the connection goes back to the pool without it either way.
    await connection`select pg_advisory_unlock(hashtext(${key}))`.catch(() => undefined);
    connection.release();
  }
}
