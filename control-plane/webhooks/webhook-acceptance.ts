import type { Db } from '../db/client.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import { insertDelivery, settleDelivery, type NewDelivery } from './webhooks.repo.ts';
import type { Delivery } from './webhooks.schema.ts';

export type DeliveryAcceptance = ReturnType<typeof createDeliveryAcceptance>;

/**
 * Stores a verified delivery and, in the same transaction, the execution of its workflow, which
 * starts once that has committed. A workflow that cannot start (gone, or the tenant may not run
 * workflows) leaves the delivery `failed`, to be replayed. Undefined for a replay.
 */
export function createDeliveryAcceptance(deps: { db: Db; orchestrate: Pick<OrchestrateService, 'prepareExecution'> }) {
  const { db } = deps;
  return async function accept(
    tenantId: string,
    actor: Actor,
    workflowId: string,
    delivery: NewDelivery & { payload: Record<string, unknown> },
  ): Promise<Delivery | undefined> {
    const outcome = await db.inTenant(tenantId, async (tx) => {
      const stored = await insertDelivery(tx, delivery);
      if (!stored) return undefined;
      try {
        const execution = await deps.orchestrate.prepareExecution(tx, actor, {
          workflowId,
          input: delivery.payload,
          metadata: { webhook: { deliveryId: stored.id, source: delivery.source, ...(delivery.replayOf ? { replayOf: delivery.replayOf } : {}) } },
        });
        return { delivery: await settleDelivery(tx, stored.id, { executionId: execution.executionId }), start: execution.start };
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        return { delivery: await settleDelivery(tx, stored.id, { failed: error.message }) };
      }
    });
    await outcome?.start?.();
    return outcome?.delivery;
  };
}
