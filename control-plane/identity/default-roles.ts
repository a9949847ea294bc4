import type { Tx } from '../db/client.ts';
import { DEFAULT_ROLES } from '../auth/permissions.ts';

/**
 * The built-in roles (`DEFAULT_ROLES`: their names and permissions) of one tenant, or of every
 * tenant when `tenantId` is null: a missing one is added, and one whose permissions differ from
 * the built-in set (an older platform's set, say) gets exactly that set. Roles with other names
 * (custom roles) are left alone, and so is a built-in role that already holds the set, in any
 * order, so running it again writes nothing. Returns how many roles it added or changed.
 */
async function convergeDefaultRoles(tx: Tx, tenantId: string | null): Promise<number> {
  const rows = await tx`
    insert into roles (tenant_id, name, permissions)
    select t.id, role.key, array(select jsonb_array_elements_text(role.value))
    from tenant_directory t, jsonb_each(${JSON.stringify(DEFAULT_ROLES)}::text::jsonb) as role
    where ${tenantId}::uuid is null or t.id = ${tenantId}::uuid
    on conflict (tenant_id, name) do update set permissions = excluded.permissions
      where not (roles.permissions @> excluded.permissions and roles.permissions <@ excluded.permissions)
    returning 1`;
  return rows.length;
}

/** Gives a tenant the built-in roles with exactly the built-in permissions; idempotent. */
export async function ensureDefaultRoles(tx: Tx, tenantId: string): Promise<void> {
  await convergeDefaultRoles(tx, tenantId);
}

/**
 * Brings every tenant's built-in roles to the platform's permissions, so that a permission added
 * to (or removed from) a built-in role reaches the tenants created before; `migrate` runs it after
 * the schema migrations. Idempotent; returns how many roles it added or changed.
 */
export async function syncDefaultRoles(tx: Tx): Promise<number> {
  return convergeDefaultRoles(tx, null);
}
