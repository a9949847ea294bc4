import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { insertVersion } from './resource-versions.repo.ts';

/** A resource as the domain that writes its type reads it: with the tenant it is in. */
export interface KeyedResource {
  id: string;
  tenantId: string;
  data: Record<string, unknown>;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The resources of one type that another domain writes (its `writtenThrough` type, such as app
 * enrollments), unique within a tenant by `data.key` (a unique index on `(tenant_id, data ->> 'key')`
 * for the type). Every write appends the change to the resource's history in the caller's
 * transaction, as the engine's own writes do. The wiring passes it to that domain as its port.
 */
export interface KeyedResources {
  /** The current tenant's resource with this key. */
  findByKey(tx: Tx, key: string): Promise<KeyedResource | undefined>;
  /** Platform work: the resources in any tenant whose data holds every one of `fields` (text values). */
  findAnywhere(tx: Tx, fields: Readonly<Record<string, string>>): Promise<KeyedResource[]>;
  /** Inserts in the current tenant; undefined when the key is taken. */
  insert(tx: Tx, data: Record<string, unknown>, by: string | null): Promise<KeyedResource | undefined>;
  /** Replaces the data when it differs (a new version); returns the stored resource either way. */
  replaceData(tx: Tx, id: string, data: Record<string, unknown>, by: string | null): Promise<KeyedResource>;
  /** Deletes the current tenant's resource, if it is there. */
  delete(tx: Tx, id: string, by: string | null): Promise<void>;
}

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const FIELD = /^[A-Za-z][A-Za-z0-9]*$/;

/** `KeyedResources` over the type `type` (a built-in type's key, written into the statements). */
export function keyedResources(type: string): KeyedResources {
  if (!NAME.test(type)) throw new Error(`not an object type key: ${type}`);
  const COLUMNS = `id::text as id, tenant_id::text as "tenantId", data, version,
    ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

  /** The change appended to the resource's history; a delete keeps the last data under the next version. */
  const recorded = async (tx: Tx, row: KeyedResource, operation: 'create' | 'update' | 'delete', actor: string | null) => {
    await insertVersion(tx, { id: row.id, type, version: operation === 'delete' ? row.version + 1 : row.version, operation, data: row.data, actor });
    return row;
  };

  return {
    async findByKey(tx, key) {
      const rows = await tx.unsafe<KeyedResource[]>(
        `select ${COLUMNS} from resources where tenant_id = current_tenant_id() and type = '${type}' and data ->> 'key' = $1`,
        [key],
        { prepare: true },
      );
      return rows[0];
    },

    async findAnywhere(tx, fields) {
      const names = Object.keys(fields);
      if (names.length === 0 || !names.every((name) => FIELD.test(name))) throw new Error('fields must be named plainly');
      const where = names.map((name, i) => `data ->> '${name}' = $${i + 1}`).join(' and ');
      return tx.unsafe<KeyedResource[]>(`select ${COLUMNS} from resources where type = '${type}' and ${where}`, Object.values(fields), { prepare: true });
    },

    async insert(tx, data, by) {
      const rows = await tx.unsafe<KeyedResource[]>(
        `insert into resources (tenant_id, type, data, created_by, created_at, updated_at)
         values (current_tenant_id(), '${type}', $1::text::jsonb, $2::uuid, ${NOW_MS}, ${NOW_MS})
         on conflict (tenant_id, (data ->> 'key')) where type = '${type}' do nothing
         returning ${COLUMNS}`,
        [JSON.stringify(data), by],
        { prepare: true },
      );
      return rows[0] && recorded(tx, rows[0], 'create', by);
    },

    async replaceData(tx, id, data, by) {
      const rows = await tx.unsafe<KeyedResource[]>(
        `update resources set data = $2::text::jsonb, version = version + 1, updated_at = ${NOW_MS}
         where tenant_id = current_tenant_id() and type = '${type}' and id = $1::uuid and data <> $2::text::jsonb
         returning ${COLUMNS}`,
        [id, JSON.stringify(data)],
        { prepare: true },
      );
      if (rows[0]) return recorded(tx, rows[0], 'update', by);
      return (await tx.unsafe<KeyedResource[]>(`select ${COLUMNS} from resources where tenant_id = current_tenant_id() and id = $1::uuid`, [id], { prepare: true }))[0]!;
    },

    async delete(tx, id, by) {
      const rows = await tx.unsafe<KeyedResource[]>(
        `delete from resources where tenant_id = current_tenant_id() and type = '${type}' and id = $1::uuid returning ${COLUMNS}`,
        [id],
        { prepare: true },
      );
      if (rows[0]) await recorded(tx, rows[0], 'delete', by);
    },
  };
}
