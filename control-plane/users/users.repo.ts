import type { Tx } from '../db/client.ts';
import type { User } from './users.schema.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';


/** A user as a member of the current tenant (row-level security keeps other tenants' users out); one invited is no member until they accept. */
const USER_SELECT = `
  select u.id::text as id, u.email, u.name, u.avatar, m.roles[1] as role,
    array(select distinct p from tenant_roles r, unnest(r.permissions) p
          where r.tenant_id = m.tenant_id and r.name = any(m.roles) order by p) as permissions,
    m.tenant_id::text as "tenantId", m.status, u.preferences,
    ${isoTimestamp('u.created_at')} as "createdAt", ${isoTimestamp('u.last_login_at')} as "lastLoginAt"
  from user_directory u join tenant_members m on m.user_id = u.id and m.tenant_id = current_tenant_id() and m.status <> 'invited'`;

export async function findMember(tx: Tx, id: string): Promise<User | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<User[]>(`${USER_SELECT} where u.id = $1::uuid`, [id], { prepare: true });
  return rows[0];
}

export async function listMembers(
  tx: Tx,
  filter: { role?: string; status?: string; search?: string; limit: number; offset: number },
): Promise<{ items: User[]; total: number }> {
  const where = ['true'];
  const values: unknown[] = [];
  const bind = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (filter.role) where.push(`${bind(filter.role)} = any(m.roles)`);
  if (filter.status) where.push(`m.status = ${bind(filter.status)}`);
  if (filter.search) {
    const term = bind(filter.search.toLowerCase());
    where.push(`(strpos(lower(u.name), ${term}) > 0 or strpos(lower(u.email), ${term}) > 0)`);
  }
  const condition = where.join(' and ');
  const countValues = [...values];
  const page = `${USER_SELECT} where ${condition} order by lower(u.email), u.id limit ${bind(String(filter.limit))}::text::int offset ${bind(String(filter.offset))}::text::int`;
  const [items, totals] = await Promise.all([
    tx.unsafe<User[]>(page, values as never[], { prepare: true }),
    tx.unsafe<{ total: number }[]>(
      `select count(*)::int as total from user_directory u join tenant_members m on m.user_id = u.id and m.tenant_id = current_tenant_id() and m.status <> 'invited' where ${condition}`,
      countValues as never[],
      { prepare: true },
    ),
  ]);
  return { items, total: totals[0]?.total ?? 0 };
}

/**
 * Whether a member of the transaction's tenant is also a member of another tenant that is not
 * deleted, whatever the membership's status (a function of the owner's: the tenant transaction
 * cannot see other tenants' memberships).
 */
export async function belongsElsewhere(tx: Tx, userId: string): Promise<boolean> {
  const [row] = await tx<[{ found: boolean }]>`select user_belongs_elsewhere(${userId}::uuid) as found`;
  return row.found;
}
