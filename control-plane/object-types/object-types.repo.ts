import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';
import type { CreateObjectTypeInput, ObjectType, UpdateObjectTypeInput } from './object-types.schema.ts';

const OBJECT_TYPE_COLUMNS = `id::text as "objectTypeId", key, name, schema, status, version, tenant_id is null as "builtIn",
  written_through as "writtenThrough", indexes, search_fields as "searchFields", actions, file_properties as "fileProperties",
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

const VISIBLE = '(tenant_id = current_tenant_id() or tenant_id is null)';

/** The statement a type lookup by name runs; exported so benchmarks replay exactly this SQL. */
export const FIND_OBJECT_TYPE_SQL = `select ${OBJECT_TYPE_COLUMNS} from object_types
  where (key = $1 or name = $1) and ${VISIBLE}
  order by key = $1 desc, tenant_id nulls last
  limit 1`;

/**
 * The type a name resolves to for the current tenant: by key first, else by PascalCase name; the
 * tenant's own before a built-in one.
 */
export async function findObjectTypeByName(tx: Tx, name: string): Promise<ObjectType | undefined> {
  const rows = await tx.unsafe<ObjectType[]>(FIND_OBJECT_TYPE_SQL, [name], { prepare: true });
  return rows[0];
}

/** The types the tenant sees by key: its own, and the built-in ones. */
export function listObjectTypes(tx: Tx) {
  return tx.unsafe<ObjectType[]>(
    `select * from (
       select distinct on (key) ${OBJECT_TYPE_COLUMNS} from object_types
       where ${VISIBLE}
       order by key, tenant_id nulls last
     ) visible order by key`,
    [],
    { prepare: true },
  );
}

/** A type the tenant sees, by id; `lock` holds the tenant's own row until commit. */
export async function findObjectTypeById(tx: Tx, id: string, lock = false): Promise<ObjectType | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<ObjectType[]>(
    `select ${OBJECT_TYPE_COLUMNS} from object_types where id = $1::uuid and ${lock ? 'tenant_id = current_tenant_id() for update' : VISIBLE}`,
    [id],
    { prepare: true },
  );
  return rows[0];
}

/** A visible type holding this key or this PascalCase name (names compare without case). */
export async function findClash(tx: Tx, key: string, name: string, except?: string): Promise<{ key: string; name: string } | undefined> {
  const rows = await tx.unsafe<{ key: string; name: string }[]>(
    `select key, name from object_types where (key = $1 or lower(name) = lower($2)) and ${VISIBLE} and id is distinct from $3::uuid limit 1`,
    [key, name, except ?? null],
    { prepare: true },
  );
  return rows[0];
}

export async function insertObjectType(tx: Tx, key: string, input: CreateObjectTypeInput): Promise<ObjectType> {
  const rows = await tx.unsafe<ObjectType[]>(
    `insert into object_types (tenant_id, key, name, schema, status, indexes, search_fields, actions, file_properties, created_at, updated_at)
     values (current_tenant_id(), $1, $2, $3::text::jsonb, $4, $5::text::jsonb, $6::text::jsonb, $7::text::jsonb, $8::text::jsonb, ${NOW_MS}, ${NOW_MS})
     returning ${OBJECT_TYPE_COLUMNS}`,
    [
      key,
      input.name,
      JSON.stringify(input.schema),
      input.status,
      JSON.stringify(input.indexes),
      JSON.stringify(input.searchFields),
      JSON.stringify(input.actions),
      JSON.stringify(input.fileProperties),
    ],
  );
  return rows[0]!;
}

/** Applies the changes to the tenant's own type and bumps its version. */
export async function updateObjectType(tx: Tx, id: string, changes: UpdateObjectTypeInput['changes']): Promise<ObjectType> {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  const rows = await tx.unsafe<ObjectType[]>(
    `update object_types set
       name = coalesce($2, name),
       schema = coalesce($3::text::jsonb, schema),
       status = coalesce($4, status),
       indexes = coalesce($5::text::jsonb, indexes),
       search_fields = coalesce($6::text::jsonb, search_fields),
       actions = coalesce($7::text::jsonb, actions),
       file_properties = coalesce($8::text::jsonb, file_properties),
       version = version + 1,
       updated_at = ${NOW_MS}
     where id = $1::uuid and tenant_id = current_tenant_id()
     returning ${OBJECT_TYPE_COLUMNS}`,
    [
      id,
      changes.name ?? null,
      json(changes.schema),
      changes.status ?? null,
      json(changes.indexes),
      json(changes.searchFields),
      json(changes.actions),
      json(changes.fileProperties),
    ],
  );
  return rows[0]!;
}

/** The stored data of a type's resources in the current tenant, a page at a time. */
export function resourceDataOf(tx: Tx, key: string) {
  return tx.unsafe<Array<{ id: string; data: unknown }>>(`select id::text as id, data from resource_rows where tenant_id = current_tenant_id() and type = $1 order by id`, [key]).cursor(500);
}

/** Serializes changes of the current tenant's indexed fields until the transaction ends. */
export async function lockTenantIndexes(tx: Tx): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('svc.object_type_indexes'), hashtext(current_tenant_id()::text))`;
}

/**
 * Claims for `leaseMs` the requests to bring a built-in type's search projections to its search
 * fields (migration 0038) that no other process holds; answers them with when each was asked.
 */
export async function claimReprojections(tx: Tx, leaseMs: number): Promise<{ key: string; requestedAt: string }[]> {
  return tx<{ key: string; requestedAt: string }[]>`
    update object_types set search_reprojection_lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
     where tenant_id is null and search_reprojection_requested_at is not null
       and (search_reprojection_lease_until is null or search_reprojection_lease_until < now())
    returning key, search_reprojection_requested_at::text as "requestedAt"`;
}

/** Extends this process's claim on the request of `key`; false when it lapsed and another process may hold it. */
export async function renewReprojection(tx: Tx, key: string, requestedAt: string, leaseMs: number): Promise<boolean> {
  const rows = await tx`
    update object_types set search_reprojection_lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
     where tenant_id is null and key = ${key} and search_reprojection_requested_at = ${requestedAt}::text::timestamptz
       and search_reprojection_lease_until >= now()
    returning key`;
  return rows.length > 0;
}

/** Clears the request of `key` made at `requestedAt` and its claim; one made since stays, unclaimed. */
export async function clearReprojection(tx: Tx, key: string, requestedAt: string): Promise<void> {
  await tx`
    update object_types set search_reprojection_lease_until = null,
           search_reprojection_requested_at = nullif(search_reprojection_requested_at, ${requestedAt}::text::timestamptz)
     where tenant_id is null and key = ${key}`;
}

/** Whether any request is still to be done (by this process or another). */
export async function reprojectionsPending(tx: Tx): Promise<boolean> {
  const [row] = await tx<{ pending: boolean }[]>`
    select exists (select 1 from object_types where tenant_id is null and search_reprojection_requested_at is not null) as pending`;
  return row!.pending;
}
