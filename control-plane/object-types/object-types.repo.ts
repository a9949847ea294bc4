import type { Tx } from '../db/client.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import type { ObjectType } from './object-types.schema.ts';

const OBJECT_TYPE_COLUMNS = `id::text as id, name, schema, version, tenant_id is null as "builtIn",
  written_through as "writtenThrough", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** Finds the tenant's own type by name, else the built-in one (rows visible under the tenant's policy). */
export async function findObjectTypeByName(tx: Tx, name: string): Promise<ObjectType | undefined> {
  const rows = await tx.unsafe<ObjectType[]>(
    `select ${OBJECT_TYPE_COLUMNS} from object_types
     where name = $1 and (tenant_id = current_tenant_id() or tenant_id is null)
     order by tenant_id nulls last
     limit 1`,
    [name],
    { prepare: true },
  );
  return rows[0];
}

/** The types the tenant sees by name: its own, and the built-in ones it has not replaced. */
export function listObjectTypes(tx: Tx) {
  return tx.unsafe<ObjectType[]>(
    `select * from (
       select distinct on (name) ${OBJECT_TYPE_COLUMNS} from object_types
       where tenant_id = current_tenant_id() or tenant_id is null
       order by name, tenant_id nulls last
     ) visible order by name`,
    [],
    { prepare: true },
  );
}
