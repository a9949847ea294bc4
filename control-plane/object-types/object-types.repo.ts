import type { Tx } from '../db/client.ts';

export interface ObjectTypeRow {
  id: string;
  tenantId: string | null;
  name: string;
  schema: Record<string, unknown>;
  version: number;
  updatedAt: Date;
}

/** Finds the tenant's own type by name, else the built-in one (rows visible under the tenant's policy). */
export async function findObjectTypeByName(tx: Tx, name: string): Promise<ObjectTypeRow | undefined> {
  const rows = await tx<ObjectTypeRow[]>`
    select id, tenant_id as "tenantId", name, schema, version, updated_at as "updatedAt"
    from object_types
    where name = ${name} and (tenant_id = current_tenant_id() or tenant_id is null)
    order by tenant_id nulls last
    limit 1`;
  return rows[0];
}
