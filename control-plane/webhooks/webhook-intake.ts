import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, DomainError, ForbiddenError, NotFoundError, PayloadTooLargeError, UnauthorizedError, ValidationError } from '../errors.ts';
import { systemActor } from '../identity/system-actor.ts';
import { createLruMap } from '../lru-map.ts';
import type { DeliveryAcceptance } from './webhook-acceptance.ts';
import type { WebhookSecrets } from './webhook-secrets.ts';
import { parseSignature, parseTimestamp, signatureMatches, WEBHOOK_HEADERS } from './webhook-signature.ts';
import { receivingEndpoint, recordRefusal, type ReceivingEndpoint } from './webhooks.repo.ts';
import { MAX_WEBHOOK_BODY_BYTES, REFUSED_SAMPLE_SIZE, type BudgetKeyInput, type DeliveryReason, type ReceiveMeta, type Received } from './webhooks.schema.ts';

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
 * What outside systems call, without a user token: deliveries to an endpoint, verified by their
 * signature and refused (and counted) otherwise, and the rate-limit budget a delivery's path spends.
 * Unverified deliveries use the intake pool only.
 */
export function createWebhookIntake(deps: {
  db: Db;
  capabilities: Pick<CapabilitiesService, 'require'>;
  opened: WebhookSecrets['opened'];
  accept: DeliveryAcceptance;
}) {
  const { db, opened, accept } = deps;
  const budgetKeys = createLruMap<{ key: string | null; until: number }>(BUDGET_KEYS);

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
