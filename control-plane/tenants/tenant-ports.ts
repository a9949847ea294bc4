import type { Db } from '../db/client.ts';
import type { DevelopmentTenants } from '../identity/dev-seed.ts';
import { ensureMembership, ensureTenantBySlug, setTenantPlan } from './tenants.repo.ts';

/**
 * Writes of the tenants table that other domains ask for, as the narrow ports the wiring passes
 * them: the tenants domain is the only one that writes `tenants` and `memberships`.
 */

/** Platform work: sets a live tenant's plan, in a transaction of its own; false for no such tenant. */
export function tenantPlanSetter(db: Db): (tenantId: string, plan: string) => Promise<boolean> {
  return (tenantId, plan) => db.system((tx) => setTenantPlan(tx, tenantId, plan));
}

/** The development seed's tenants and memberships, in the seed's transaction; both idempotent. */
export const developmentTenants: DevelopmentTenants = {
  ensure: ensureTenantBySlug,
  async addMember(tx, tenantId, userId, roles) {
    await ensureMembership(tx, tenantId, userId, roles);
  },
};
