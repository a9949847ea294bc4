import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { createDeliveryAcceptance } from './webhook-acceptance.ts';
import { createWebhookEndpoints } from './webhook-endpoints.ts';
import { createWebhookIntake } from './webhook-intake.ts';
import { createWebhookSecrets } from './webhook-secrets.ts';
import { findDelivery, listDeliveries, listRefusalWindows, REFUSAL_WINDOW_SECONDS } from './webhooks.repo.ts';
import type { Delivery, DeliveryDetail, DeliveryPage, ListDeliveriesInput, ListRefusalsInput, RefusalPage } from './webhooks.schema.ts';

/**
 * Inbound webhooks. A tenant administrator configures an endpoint per source (its target workflow
 * and a secret shown once); outside systems post signed deliveries to it without a user token: the
 * HMAC-SHA256 signature of `<timestamp>.<body>` is their authentication. A verified delivery is
 * stored and starts the target workflow with its JSON body as input; a signature or sender's
 * delivery id seen before, a timestamp outside the tolerance, a bad or missing signature and a
 * body over the limit are refused, and recorded too. Administrators list deliveries and replay
 * verified ones. Everything needs the `webhooks` capability except reading and removing what exists.
 */
export function createWebhooksService(deps: {
  db: Db;
  capabilities: Pick<CapabilitiesService, 'require'>;
  orchestrate: Pick<OrchestrateService, 'listWorkflows' | 'prepareExecution'>;
  /** Seals endpoint secrets with the operator's key; processes without one never touch them. */
  secrets?: SecretBox;
}) {
  const { db } = deps;
  const secrets = createWebhookSecrets(deps.secrets);
  const accept = createDeliveryAcceptance(deps);
  const endpoints = createWebhookEndpoints({ ...deps, secrets });
  const { endpointOrThrow } = endpoints;
  const intake = createWebhookIntake({ db, capabilities: deps.capabilities, opened: secrets.opened, accept });

  return {
    createEndpoint: endpoints.createEndpoint,
    listEndpoints: endpoints.listEndpoints,
    getEndpoint: endpoints.getEndpoint,
    updateEndpoint: endpoints.updateEndpoint,
    deleteEndpoint: endpoints.deleteEndpoint,
    rotateSecret: endpoints.rotateSecret,

    async listDeliveries(actor: Actor, input: ListDeliveriesInput): Promise<DeliveryPage> {
      const { source, ...filter } = input;
      const endpoint = await endpointOrThrow(actor, source);
      const { rows, total } = await db.inTenant(actor.tenantId, (tx) => listDeliveries(tx, endpoint.id, filter));
      return { data: rows, total, limit: filter.limit, offset: filter.offset };
    },

    async getDelivery(actor: Actor, deliveryId: string): Promise<DeliveryDetail> {
      const found = await db.inTenant(actor.tenantId, (tx) => findDelivery(tx, deliveryId));
      if (!found) throw new NotFoundError('webhook delivery');
      const { workflowId: _workflowId, ...delivery } = found;
      return delivery;
    },

    /** Starts the endpoint's workflow again with a verified delivery's payload, as a new delivery that names the one it replays. */
    async replayDelivery(actor: Actor, deliveryId: string): Promise<Delivery> {
      await deps.capabilities.require(actor.tenantId, 'webhooks');
      const original = await db.inTenant(actor.tenantId, (tx) => findDelivery(tx, deliveryId));
      if (!original) throw new NotFoundError('webhook delivery');
      if (!original.payload || !original.workflowId) throw new ConflictError('only a verified delivery can be replayed: this one was refused', { status: original.status, reason: original.reason });
      const replayed = await accept(actor.tenantId, actor, original.workflowId, {
        endpointId: original.endpointId,
        source: original.source,
        status: 'accepted',
        sizeBytes: original.sizeBytes,
        contentType: original.contentType ?? undefined,
        payload: original.payload,
        replayOf: original.id,
        replayedBy: actor.userId,
      });
      return replayed!;
    },

    /** Refusal counts of an endpoint, per window (an hour) and reason, newest first, over the retention (30 days). */
    async listRefusals(actor: Actor, input: ListRefusalsInput): Promise<RefusalPage> {
      const { source, ...page } = input;
      const endpoint = await endpointOrThrow(actor, source);
      const { rows, total, refused } = await db.inTenant(actor.tenantId, (tx) => listRefusalWindows(tx, endpoint.id, page));
      return { data: rows.map((row) => ({ ...row, windowSeconds: REFUSAL_WINDOW_SECONDS })), total, limit: page.limit, offset: page.offset, refused };
    },

    budgetKey: intake.budgetKey,
    receive: intake.receive,
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
