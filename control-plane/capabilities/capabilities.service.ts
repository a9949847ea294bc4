import type { Db } from '../db/client.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor, Principal } from '../identity/identity.schema.ts';
import { UUID } from '../ids.ts';
import { capabilityFactsOf, deleteOverride, isLiveTenant, tenantOverrides, tenantPlanFacts, upsertOverride } from './capabilities.repo.ts';
import { PLANS, type Decision, type EvaluateInput, type Evaluation, type Override, type OverrideInput, type Plan } from './capabilities.schema.ts';
import { CATALOG, DEFAULT_PLAN, planOfTemplate } from './catalog.ts';

export type CapabilitiesService = ReturnType<typeof createCapabilitiesService>;

const byKey = new Map(CATALOG.map((capability) => [capability.key, capability]));

function knownCapability(key: string, field: string) {
  const capability = byKey.get(key);
  if (!capability) throw ValidationError.field(field, `"${key}" is not a capability; see GET /v4/platform/capabilities/catalog`);
  return capability;
}

/** One capability's decision from the plan, the region and an override (which wins). */
function decide(key: string, plan: Plan, region: string | null, override: Pick<Override, 'allowed' | 'limits' | 'reason'> | undefined): Decision {
  const capability = knownCapability(key, 'capabilities');
  if (override) {
    return { allowed: override.allowed, reason: `${override.allowed ? 'allowed' : 'refused'} for this tenant by a platform administrator: ${override.reason}`, limits: override.limits };
  }
  const offer = capability.plans[plan];
  if (!offer.included) return { allowed: false, reason: `the ${plan} plan does not include ${key}`, limits: {} };
  if (capability.regions && region && !capability.regions.includes(region)) return { allowed: false, reason: `${key} is not offered in region ${region}`, limits: {} };
  return { allowed: true, reason: `included in the ${plan} plan`, limits: offer.limits };
}

/**
 * What each tenant may use: the catalog of capabilities per plan, a tenant's plan (set by a
 * platform administrator, else the one its starter template comes with, else `defaultPlan`), and
 * per-tenant overrides. Other features call `require` before they act.
 */
export function createCapabilitiesService(deps: {
  db: Db;
  defaultPlan?: Plan;
  /** Sets a live tenant's plan (the tenants domain writes it); false for no such tenant. */
  setTenantPlan: (tenantId: string, plan: Plan) => Promise<boolean>;
}) {
  const { db } = deps;
  const defaultPlan = deps.defaultPlan ?? DEFAULT_PLAN;

  async function evaluateFor(tenantId: string, input: EvaluateInput): Promise<Evaluation> {
    const keys = input.capabilities ?? CATALOG.map((c) => c.key);
    keys.forEach((key, i) => knownCapability(key, `capabilities.${i}`));
    const { facts, overrides } = await db.inTenant(tenantId, async (tx) => ({ facts: await tenantPlanFacts(tx), overrides: await tenantOverrides(tx) }));
    if (!facts) throw new NotFoundError('tenant');
    const plan = facts.plan ?? planOfTemplate(facts.starterTemplate, defaultPlan);
    const region = input.context.region ?? facts.homeRegion;
    const decisions = Object.fromEntries(keys.map((key) => [key, decide(key, plan, region, overrides.find((o) => o.capability === key))]));
    return { tenantId, plan, decisions };
  }

  return {
    catalog: () => ({ plans: [...PLANS], items: [...CATALOG] }),

    evaluate: (actor: Actor, input: EvaluateInput) => evaluateFor(actor.tenantId, input),

    /** Refuses (403, naming the capability and why) what the tenant may not use; returns its limits otherwise. */
    async require(tenantId: string, key: string): Promise<Decision> {
      const decision = (await evaluateFor(tenantId, { capabilities: [key], context: {} })).decisions[key]!;
      if (!decision.allowed) throw new ForbiddenError(`capability ${key} is not available to this tenant: ${decision.reason}`);
      return decision;
    },

    /**
     * Of these tenants, those that may not use `key` now, each with the reason `require` would
     * give, in one query: for work that re-checks many tenants at once (open realtime connections).
     */
    async refusing(tenantIds: string[], key: string): Promise<Map<string, string>> {
      knownCapability(key, 'capability');
      const facts = tenantIds.length === 0 ? [] : await db.system((tx) => capabilityFactsOf(tx, tenantIds, key));
      const refused = new Map<string, string>();
      for (const f of facts) {
        const decision = decide(key, f.plan ?? planOfTemplate(f.starterTemplate, defaultPlan), f.homeRegion, f.override ?? undefined);
        if (!decision.allowed) refused.set(f.tenantId, `capability ${key} is not available to this tenant: ${decision.reason}`);
      }
      return refused;
    },

    /** A platform administrator allows or refuses a capability for one tenant, whatever its plan. */
    async setOverride(principal: Principal, input: OverrideInput): Promise<Override> {
      knownCapability(input.capability, 'capability');
      if (!UUID.test(input.tenantId)) throw new NotFoundError('tenant');
      return db.system(async (tx) => {
        if (!(await isLiveTenant(tx, input.tenantId))) throw new NotFoundError('tenant');
        return upsertOverride(tx, { ...input, setBy: principal.userId });
      });
    },

    async removeOverride(tenantId: string, capability: string): Promise<void> {
      const removed = UUID.test(tenantId) && (await db.system((tx) => deleteOverride(tx, tenantId, capability)));
      if (!removed) throw new NotFoundError('capability override');
    },

    async setPlan(tenantId: string, plan: Plan): Promise<{ tenantId: string; plan: Plan; fromTemplate: boolean }> {
      const updated = UUID.test(tenantId) && (await deps.setTenantPlan(tenantId, plan));
      if (!updated) throw new NotFoundError('tenant');
      return { tenantId, plan, fromTemplate: false };
    },
  };
}
