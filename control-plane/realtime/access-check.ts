import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { AccessCheck, Holder } from './realtime-access.ts';

/** Why a connection ends when its user lost the membership or permission it was opened with. */
export const MEMBERSHIP_REVOKED = "the user's membership of the tenant, or its permission to read resources, was removed";

/**
 * Who of the holders lost access to realtime, in two queries whatever their number: their active
 * membership in a live tenant with `resources.read`, then their tenant's `realtime` capability
 * (a platform administrator can withdraw it, or the tenant's plan change).
 */
export function realtimeAccessCheck(deps: { identity: Pick<IdentityService, 'holding'>; capabilities: Pick<CapabilitiesService, 'refusing'> }): AccessCheck {
  const keyOf = (holder: Holder) => `${holder.tenantId}|${holder.userId}`;
  return async (holders) => {
    const members = new Set((await deps.identity.holding(holders, 'resources.read')).map(keyOf));
    const refused = await deps.capabilities.refusing([...new Set(holders.map((h) => h.tenantId))], 'realtime');
    return holders.flatMap((holder) => {
      if (!members.has(keyOf(holder))) return [{ holder, reason: MEMBERSHIP_REVOKED }];
      const reason = refused.get(holder.tenantId);
      return reason ? [{ holder, reason }] : [];
    });
  };
}
