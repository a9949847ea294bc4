import type { Tx } from '../db/client.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import type { Override, Plan } from './capabilities.schema.ts';

const OVERRIDE_COLUMNS = `tenant_id::text as "tenantId", capability, allowed, limits, reason, set_by::text as "setBy", ${isoTimestamp('set_at')} as "setAt"`;

/** The current tenant's plan (null: from its template), template and home region. */
export async function tenantPlanFacts(tx: Tx): Promise<{ plan: Plan | null; starterTemplate: string; homeRegion: string | null } | undefined> {
  const rows = await tx<{ plan: Plan | null; starterTemplate: string; homeRegion: string | null }[]>`
    select plan, starter_template as "starterTemplate", home_region as "homeRegion" from tenant_directory where id = current_tenant_id()`;
  return rows[0];
}

/** The current tenant's overrides. */
export function tenantOverrides(tx: Tx) {
  return tx<Override[]>`select ${tx.unsafe(OVERRIDE_COLUMNS)} from capability_overrides where tenant_id = current_tenant_id()`;
}

/** Platform work (the owner's transaction): sets or replaces a tenant's override. */
export async function upsertOverride(tx: Tx, override: Omit<Override, 'setAt'>): Promise<Override> {
  const rows = await tx.unsafe<Override[]>(
    `insert into capability_overrides (tenant_id, capability, allowed, limits, reason, set_by)
     values ($1::uuid, $2, $3, $4::text::jsonb, $5, $6::uuid)
     on conflict (tenant_id, capability) do update set allowed = excluded.allowed, limits = excluded.limits, reason = excluded.reason,
       set_by = excluded.set_by, set_at = date_trunc('milliseconds', now())
     returning ${OVERRIDE_COLUMNS}`,
    [override.tenantId, override.capability, override.allowed, JSON.stringify(override.limits), override.reason, override.setBy],
  );
  return rows[0]!;
}

/** Platform work: removes a tenant's override; false when there was none. */
export async function deleteOverride(tx: Tx, tenantId: string, capability: string): Promise<boolean> {
  return (await tx`delete from capability_overrides where tenant_id = ${tenantId}::uuid and capability = ${capability} returning 1`).length > 0;
}

/** Platform work: whether a tenant exists and is not deleted. */
export async function isLiveTenant(tx: Tx, tenantId: string): Promise<boolean> {
  return (await tx`select 1 from tenant_directory where id = ${tenantId}::uuid and deleted_at is null`).length > 0;
}

/** What decides one capability for a tenant: its plan facts and its override of that capability, if any. */
export interface CapabilityFacts {
  tenantId: string;
  plan: Plan | null;
  starterTemplate: string;
  homeRegion: string | null;
  override: Pick<Override, 'allowed' | 'limits' | 'reason'> | null;
}

/** Platform work: the facts deciding `capability` for each of these tenants that exists, in one query. */
export function capabilityFactsOf(tx: Tx, tenantIds: string[], capability: string): Promise<CapabilityFacts[]> {
  return tx<CapabilityFacts[]>`
    select t.id::text as "tenantId", t.plan, t.starter_template as "starterTemplate", t.home_region as "homeRegion",
      case when o.tenant_id is null then null else jsonb_build_object('allowed', o.allowed, 'limits', o.limits, 'reason', o.reason) end as override
    from tenant_directory t left join capability_overrides o on o.tenant_id = t.id and o.capability = ${capability}
    where t.id = any(${tenantIds}::uuid[])`;
}
