import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, DomainError, ForbiddenError, NotFoundError, PayloadTooLargeError, UnauthorizedError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import type { OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import { isSealed, type SecretBox } from '../secrets/secret-box.ts';
import { secretContext } from './webhook-secret-reseal.ts';
import { newWebhookSecret, parseSignature, parseTimestamp, signatureMatches, WEBHOOK_HEADERS } from './webhook-signature.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertDelivery,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  listRefusalWindows,
  receivingEndpoint,
  recordRefusal,
  REFUSAL_WINDOW_SECONDS,
  replaceSecret,
  secretHintOf,
  settleDelivery,
  updateEndpoint,
  type NewDelivery,
  type ReceivingEndpoint,
} from './webhooks.repo.ts';
import { createLruMap } from '../lru-map.ts';
import { MAX_WEBHOOK_BODY_BYTES, REFUSED_SAMPLE_SIZE } from './webhooks.schema.ts';
import type {
  BudgetKeyInput,
  CreateEndpointInput,
  Delivery,
  DeliveryDetail,
  DeliveryPage,
  DeliveryReason,
  Endpoint,
  EndpointWithSecret,
  ListDeliveriesInput,
  ListRefusalsInput,
  ReceiveMeta,
  RefusalPage,
  Received,
  RotatedEndpoint,
  UpdateEndpointInput,
} from './webhooks.schema.ts';

/** How long the secret a rotation replaces keeps working, unless the rotation revokes it. */
export const WEBHOOK_SECRET_OVERLAP_SECONDS = 24 * 3600;


/** A refused delivery: recorded with `reason`, then answered with `error`. */
class Refusal extends Error {
  constructor(
    readonly reason: DeliveryReason,
    readonly error: DomainError,
  ) {
    super(error.message);
  }
}

/** How many paths' budget keys are remembered, and for how long: a key only picks a budget, so a stale one costs nothing but that. */
const BUDGET_KEYS = 10_000;
const BUDGET_KEY_TTL_MS = 60_000;

/** The body's bytes, read no further than `limit` (the rest is left to the caller to discard); `over` when it is longer. */
async function readUpTo(body: AsyncIterable<Uint8Array>, limit: number): Promise<{ bytes: Buffer; size: number; over: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return { bytes: Buffer.alloc(0), size, over: true };
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks), size, over: false };
}

function jsonObjectOf(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

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

  function box(): SecretBox {
    if (!deps.secrets) throw new Error('webhook secrets need the operator key (SECRETS_KEY), which this process was not given');
    return deps.secrets;
  }

  const sealed = (tenantId: string, source: string, secret: string) => ({ sealed: box().seal(secret, secretContext(tenantId, source)), hint: secretHintOf(secret) });

  /** A stored secret's plain text: sealed ones opened, plain ones (an earlier version's, not yet sealed) as they are. */
  const opened = (endpoint: ReceivingEndpoint, stored: string) => (isSealed(stored) ? box().open(stored, secretContext(endpoint.tenantId, endpoint.source)) : stored);

  async function assertWorkflow(tenantId: string, workflowId: string): Promise<void> {
    const workflows = await deps.orchestrate.listWorkflows(systemActor(tenantId));
    if (!workflows.some((w) => w.id === workflowId)) throw ValidationError.field('workflowId', `names no workflow of this tenant ("${workflowId}")`);
  }

  async function endpointOrThrow(actor: Actor, source: string): Promise<Endpoint> {
    const endpoint = await db.inTenant(actor.tenantId, (tx) => findEndpoint(tx, source));
    if (!endpoint) throw new NotFoundError(`webhook endpoint "${source}"`);
    return endpoint;
  }

  const budgetKeys = createLruMap<{ key: string | null; until: number }>(BUDGET_KEYS);

  /**
   * Stores a verified delivery and, in the same transaction, the execution of its workflow, which
   * starts once that has committed. A workflow that cannot start (gone, or the tenant may not run
   * workflows) leaves the delivery `failed`, to be replayed. Undefined for a replay.
   */
  async function accept(
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
  }

  /** The refusal of a delivery's headers and body, or its verified JSON object. */
  function verify(endpoint: ReceivingEndpoint, meta: ReceiveMeta, bytes: Buffer): { payload: Record<string, unknown>; digest: string; signedAt: number } {
    if (!meta.signature) throw new Refusal('signature_missing', new UnauthorizedError(`the ${WEBHOOK_HEADERS.signature} header is required (sha256=<hex HMAC of "<timestamp>.<body>">)`));
    if (!meta.timestamp) throw new Refusal('timestamp_missing', new UnauthorizedError(`the ${WEBHOOK_HEADERS.timestamp} header is required (Unix time in seconds)`));
    const signedAt = parseTimestamp(meta.timestamp);
    if (signedAt === undefined) throw new Refusal('timestamp_invalid', new UnauthorizedError(`the ${WEBHOOK_HEADERS.timestamp} header must be Unix time in seconds`));
    const digest = parseSignature(meta.signature);
    const secrets = [endpoint.secret, ...(endpoint.previousSecret ? [endpoint.previousSecret] : [])];
    if (!digest || !secrets.some((secret) => signatureMatches(opened(endpoint, secret), meta.timestamp!, bytes, digest))) {
      throw new Refusal('signature_invalid', new UnauthorizedError(`the ${WEBHOOK_HEADERS.signature} header does not sign this timestamp and body`));
    }
    if (Math.abs(Date.now() / 1000 - signedAt) > endpoint.toleranceSeconds) {
      throw new Refusal('timestamp_stale', new UnauthorizedError(`the delivery's timestamp is more than ${endpoint.toleranceSeconds} s from the server's clock`));
    }
    const payload = jsonObjectOf(bytes);
    if (!payload) throw new Refusal('invalid_body', ValidationError.field('(body)', 'must be a JSON object'));
    return { payload, digest, signedAt };
  }

  return {
    async createEndpoint(actor: Actor, input: CreateEndpointInput): Promise<EndpointWithSecret> {
      const { limits } = await deps.capabilities.require(actor.tenantId, 'webhooks');
      await assertWorkflow(actor.tenantId, input.workflowId);
      const secret = newWebhookSecret();
      const endpoint = await db.inTenant(actor.tenantId, async (tx) => {
        if (limits.maxEndpoints !== undefined && (await countEndpoints(tx)) >= limits.maxEndpoints) {
          throw new ForbiddenError(`capability webhooks allows at most ${limits.maxEndpoints} endpoints for this tenant`);
        }
        return insertEndpoint(tx, input, sealed(actor.tenantId, input.source, secret), actor.userId);
      });
      if (!endpoint) throw new ConflictError(`a webhook endpoint for source "${input.source}" exists already`, { source: input.source });
      return { ...endpoint, secret };
    },

    listEndpoints: (actor: Actor) => db.inTenant(actor.tenantId, (tx) => listEndpoints(tx)),

    getEndpoint: (actor: Actor, source: string) => endpointOrThrow(actor, source),

    async updateEndpoint(actor: Actor, input: UpdateEndpointInput): Promise<Endpoint> {
      await deps.capabilities.require(actor.tenantId, 'webhooks');
      if (input.workflowId !== undefined) await assertWorkflow(actor.tenantId, input.workflowId);
      const endpoint = await db.inTenant(actor.tenantId, (tx) => updateEndpoint(tx, input));
      if (!endpoint) throw new NotFoundError(`webhook endpoint "${input.source}"`);
      return endpoint;
    },

    /** Removes the endpoint and its deliveries; its secret stops working at once. */
    async deleteEndpoint(actor: Actor, source: string): Promise<void> {
      if (!(await db.inTenant(actor.tenantId, (tx) => deleteEndpoint(tx, source)))) throw new NotFoundError(`webhook endpoint "${source}"`);
    },

    /**
     * A new secret, shown this once. The one it replaces keeps working for
     * {@link WEBHOOK_SECRET_OVERLAP_SECONDS} (until `previousSecretExpiresAt`), or stops at once
     * with `revokePrevious` (a leaked secret); an older one stops at once.
     */
    async rotateSecret(actor: Actor, source: string, options: { revokePrevious?: boolean } = {}): Promise<RotatedEndpoint> {
      await deps.capabilities.require(actor.tenantId, 'webhooks');
      const secret = newWebhookSecret();
      const overlap = options.revokePrevious ? 0 : WEBHOOK_SECRET_OVERLAP_SECONDS;
      const endpoint = await db.system((tx) => replaceSecret(tx, actor.tenantId, source, sealed(actor.tenantId, source, secret), overlap));
      if (!endpoint) throw new NotFoundError(`webhook endpoint "${source}"`);
      return { ...endpoint, secret };
    },

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

    /**
     * The budget a delivery to this path spends: its endpoint's (`<tenant id>/<source>`), however
     * the path spells the tenant (id in any letter case, or slug); null when it names no endpoint.
     * Remembered per path for a minute (at most BUDGET_KEYS paths), looked up on the intake pool.
     */
    async budgetKey(input: BudgetKeyInput): Promise<{ key: string | null }> {
      const path = `${input.tenantId}/${input.source}`;
      const known = budgetKeys.get(path);
      if (known && known.until > Date.now()) return { key: known.key };
      const endpoint = await db.intake((tx) => receivingEndpoint(tx, input.tenantId, input.source));
      const key = endpoint ? `${endpoint.tenantId}/${endpoint.source}` : null;
      budgetKeys.set(path, { key, until: Date.now() + BUDGET_KEY_TTL_MS });
      return { key };
    },

    /**
     * An inbound delivery: 404 for no such endpoint (not recorded: it names no tenant's endpoint);
     * otherwise every refusal is counted, and kept among the endpoint's newest REFUSED_SAMPLE_SIZE,
     * before it is answered. Unverified deliveries use the intake pool only. 202 with the
     * delivery's id, and its execution's, when accepted.
     */
    async receive(meta: ReceiveMeta, body: AsyncIterable<Uint8Array>): Promise<Received> {
      const endpoint = await db.intake((tx) => receivingEndpoint(tx, meta.tenantId, meta.source));
      const limit = endpoint?.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES;
      // Read before any answer, refusals included: an answer that leaves the sender's bytes unread can reach it as a reset connection.
      const read = await readUpTo(body, limit);
      if (!endpoint) throw new NotFoundError(`webhook endpoint "${meta.source}"`);
      const declared = meta.contentLength !== undefined && /^\d{1,15}$/.test(meta.contentLength) ? Number(meta.contentLength) : undefined;
      const described = { externalId: meta.deliveryId || undefined, contentType: meta.contentType, userAgent: meta.userAgent };
      const size = Math.max(declared ?? 0, read.size);
      try {
        if (!endpoint.enabled) throw new Refusal('endpoint_disabled', new ForbiddenError(`webhook endpoint "${endpoint.source}" is disabled`));
        if (read.over || size > limit) throw new Refusal('payload_too_large', new PayloadTooLargeError(limit));
        const { payload, digest, signedAt } = verify(endpoint, meta, read.bytes);
        // After the signature: an unsigned flood never reaches the tenant connections this check takes.
        await deps.capabilities.require(endpoint.tenantId, 'webhooks').catch((error: unknown) => {
          throw error instanceof DomainError ? new Refusal('capability_refused', error) : error;
        });
        const delivery = await accept(endpoint.tenantId, systemActor(endpoint.tenantId), endpoint.workflowId, {
          ...described,
          endpointId: endpoint.id,
          source: endpoint.source,
          status: 'accepted',
          signature: digest,
          signedAt,
          sizeBytes: read.size,
          payload,
        });
        if (!delivery) {
          throw new Refusal('replayed', new ConflictError(`this delivery was received before (its signature or ${WEBHOOK_HEADERS.deliveryId} is taken)`));
        }
        return { deliveryId: delivery.id, status: delivery.status === 'failed' ? 'failed' : 'accepted', executionId: delivery.executionId };
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        await db.intake((tx) => recordRefusal(tx, endpoint, { ...described, reason: error.reason, message: error.message, sizeBytes: size }, REFUSED_SAMPLE_SIZE));
        throw error.error;
      }
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
