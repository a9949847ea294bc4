import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';
import type { CreateEndpointInput, Delivery, DeliveryDetail, DeliveryReason, Endpoint, ListDeliveriesInput, UpdateEndpointInput } from './webhooks.schema.ts';

const ENDPOINT_COLUMNS = `id::text as id, tenant_id::text as "tenantId", source, description, workflow_id as "workflowId", enabled,
  tolerance_seconds as "toleranceSeconds", max_body_bytes as "maxBodyBytes", secret_hint as "secretHint",
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt", ${isoTimestamp('secret_rotated_at')} as "secretRotatedAt"`;

const DELIVERY_COLUMNS = `id::text as id, endpoint_id::text as "endpointId", source, status, reason, message, external_id as "externalId",
  ${isoTimestamp('signed_at')} as "signedAt", size_bytes::float8 as "sizeBytes", content_type as "contentType", user_agent as "userAgent",
  execution_id::text as "executionId", replay_of::text as "replayOf", replayed_by::text as "replayedBy", ${isoTimestamp('received_at')} as "receivedAt"`;

/** How long deliveries are kept: longer than any tolerance window, so replay protection holds. */
const DELIVERY_RETENTION = `interval '30 days'`;

export const secretHintOf = (secret: string) => `${secret.slice(0, 10)}…`;

/** A secret as it is stored (sealed by the caller), with the hint of its plain text. */
export interface StoredSecret {
  sealed: string;
  hint: string;
}

export async function insertEndpoint(tx: Tx, input: CreateEndpointInput, secret: StoredSecret, createdBy: string): Promise<Endpoint | undefined> {
  const rows = await tx.unsafe<Endpoint[]>(
    `insert into webhook_endpoints (tenant_id, source, description, workflow_id, secret, secret_hint, tolerance_seconds, max_body_bytes, enabled, created_by)
     values (current_tenant_id(), $1, $2, $3, $4, $5, $6, $7, $8, nullif($9, '')::uuid)
     on conflict (tenant_id, source) do nothing
     returning ${ENDPOINT_COLUMNS}`,
    [input.source, input.description, input.workflowId, secret.sealed, secret.hint, input.toleranceSeconds, input.maxBodyBytes, input.enabled, createdBy],
  );
  return rows[0];
}

export function listEndpoints(tx: Tx): Promise<Endpoint[]> {
  return tx.unsafe<Endpoint[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoints where tenant_id = current_tenant_id() order by source`);
}

export async function countEndpoints(tx: Tx): Promise<number> {
  const [row] = await tx<{ n: number }[]>`select count(*)::int as n from webhook_endpoints where tenant_id = current_tenant_id()`;
  return row!.n;
}

export async function findEndpoint(tx: Tx, source: string): Promise<Endpoint | undefined> {
  const rows = await tx.unsafe<Endpoint[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoints where tenant_id = current_tenant_id() and source = $1`, [source]);
  return rows[0];
}

export async function updateEndpoint(tx: Tx, input: UpdateEndpointInput): Promise<Endpoint | undefined> {
  const rows = await tx.unsafe<Endpoint[]>(
    `update webhook_endpoints set
       workflow_id = coalesce($2, workflow_id), description = coalesce($3, description), tolerance_seconds = coalesce($4::int, tolerance_seconds),
       max_body_bytes = coalesce($5::int, max_body_bytes), enabled = coalesce($6::boolean, enabled), updated_at = ${NOW_MS}
     where tenant_id = current_tenant_id() and source = $1
     returning ${ENDPOINT_COLUMNS}`,
    [input.source, input.workflowId ?? null, input.description ?? null, input.toleranceSeconds ?? null, input.maxBodyBytes ?? null, input.enabled ?? null],
  );
  return rows[0];
}

export async function deleteEndpoint(tx: Tx, source: string): Promise<boolean> {
  return (await tx`delete from webhook_endpoints where tenant_id = current_tenant_id() and source = ${source} returning 1`).length > 0;
}

/**
 * Platform work (the owner's transaction: the tenant role may not read the secret it moves): the
 * endpoint's new secret; the one it replaces keeps working for `overlapSeconds` (0: stops at once).
 */
export async function replaceSecret(
  tx: Tx,
  tenantId: string,
  source: string,
  secret: StoredSecret,
  overlapSeconds: number,
): Promise<(Endpoint & { previousSecretExpiresAt: string | null }) | undefined> {
  const rows = await tx.unsafe<(Endpoint & { previousSecretExpiresAt: string | null })[]>(
    `update webhook_endpoints set secret = $3, secret_hint = $4, secret_rotated_at = ${NOW_MS}, updated_at = ${NOW_MS},
       previous_secret = case when $5::int > 0 then secret end,
       previous_secret_expires_at = case when $5::int > 0 then ${NOW_MS} + make_interval(secs => $5::int) end
     where tenant_id = $1::uuid and source = $2
     returning ${ENDPOINT_COLUMNS}, ${isoTimestamp('previous_secret_expires_at')} as "previousSecretExpiresAt"`,
    [tenantId, source, secret.sealed, secret.hint, overlapSeconds],
  );
  return rows[0];
}

/** A stored endpoint secret and the one it replaced, as the re-sealing pass reads them. */
export interface StoredSecrets {
  id: string;
  tenantId: string;
  source: string;
  secret: string;
  previousSecret: string | null;
}

/** Platform work: the endpoints with a secret (current or previous) not sealed under the key `like` names: plain, or under another key. */
export function secretsNotSealedLike(tx: Tx, like: string): Promise<StoredSecrets[]> {
  return tx<StoredSecrets[]>`
    select id::text as id, tenant_id::text as "tenantId", source, secret, previous_secret as "previousSecret" from webhook_endpoints
    where secret not like ${like} or previous_secret not like ${like}`;
}

/** Platform work: replaces an endpoint's stored secrets by their new sealed forms, unless the row changed meanwhile. */
export async function resealSecrets(tx: Tx, was: StoredSecrets, secret: string, previousSecret: string | null): Promise<void> {
  await tx`
    update webhook_endpoints set secret = ${secret}, previous_secret = ${previousSecret}
    where id = ${was.id}::uuid and secret = ${was.secret} and previous_secret is not distinct from ${was.previousSecret}`;
}

/** An endpoint with its secret, for verifying a delivery. */
export interface ReceivingEndpoint {
  id: string;
  tenantId: string;
  source: string;
  workflowId: string;
  /** As stored: sealed (or plain, until the control plane has sealed an earlier version's rows). */
  secret: string;
  /** The secret a rotation replaced, while its overlap lasts. */
  previousSecret: string | null;
  enabled: boolean;
  toleranceSeconds: number;
  maxBodyBytes: number;
}

/** Platform work (the owner's transaction; tenant transactions cannot read secrets): the endpoint of a live tenant, named by id (in either letter case) or slug. */
export async function receivingEndpoint(tx: Tx, tenantRef: string, source: string): Promise<ReceivingEndpoint | undefined> {
  const rows = await tx<ReceivingEndpoint[]>`
    select e.id::text as id, e.tenant_id::text as "tenantId", e.source, e.workflow_id as "workflowId", e.secret, e.enabled,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as "previousSecret",
           e.tolerance_seconds as "toleranceSeconds", e.max_body_bytes as "maxBodyBytes"
    from webhook_endpoints e join tenant_directory t on t.id = e.tenant_id
    where t.deleted_at is null and e.source = ${source} and ${UUID.test(tenantRef) ? tx`t.id = ${tenantRef}::uuid` : tx`t.slug = ${tenantRef}`}`;
  return rows[0];
}

/** How long a window of refusal counts is. */
export const REFUSAL_WINDOW_SECONDS = 3600;

/**
 * Platform work (the intake's owner transaction): counts a refused delivery in its endpoint's
 * current window and keeps it as a `rejected` delivery, then forgets the endpoint's refused
 * deliveries past the newest `sampleSize`, and counts and deliveries past their retention.
 * Refusals of one endpoint take turns (a transaction-level lock), so the sample never grows past
 * its size however many arrive at once.
 */
export async function recordRefusal(
  tx: Tx,
  endpoint: { id: string; tenantId: string; source: string },
  refusal: { reason: DeliveryReason; message: string; externalId?: string; sizeBytes: number; contentType?: string; userAgent?: string },
  sampleSize: number,
): Promise<void> {
  await tx`select pg_advisory_xact_lock(${REFUSAL_LOCK_CLASS}::int, hashtext(${endpoint.id}))`;
  await Promise.all([
    tx`insert into webhook_refusal_counts (tenant_id, endpoint_id, window_start, reason, refused)
       values (${endpoint.tenantId}::uuid, ${endpoint.id}::uuid, to_timestamp(floor(extract(epoch from now()) / ${REFUSAL_WINDOW_SECONDS}) * ${REFUSAL_WINDOW_SECONDS}), ${refusal.reason}, 1)
       on conflict (endpoint_id, window_start, reason) do update set refused = webhook_refusal_counts.refused + 1`,
    tx`delete from webhook_refusal_counts where endpoint_id = ${endpoint.id}::uuid and window_start < now() - ${tx.unsafe(DELIVERY_RETENTION)}`,
    tx`delete from webhook_deliveries where endpoint_id = ${endpoint.id}::uuid and received_at < now() - ${tx.unsafe(DELIVERY_RETENTION)}`,
    tx`insert into webhook_deliveries (tenant_id, endpoint_id, source, status, reason, message, external_id, size_bytes, content_type, user_agent)
       values (${endpoint.tenantId}::uuid, ${endpoint.id}::uuid, ${endpoint.source}, 'rejected', ${refusal.reason}, ${refusal.message},
               ${refusal.externalId ?? null}, ${refusal.sizeBytes}, ${refusal.contentType ?? null}, ${refusal.userAgent ?? null})`,
  ]);
  await tx`delete from webhook_deliveries where id in (
      select id from webhook_deliveries where endpoint_id = ${endpoint.id}::uuid and status = 'rejected'
      order by received_at desc, id desc offset ${sampleSize})`;
}

/** The advisory lock class under which an endpoint's refusals take turns (the second key is the endpoint's). */
const REFUSAL_LOCK_CLASS = 0x5748; // 'WH'

/** Refusal counts of one endpoint of the current tenant: a page of windows, newest first, with their counts by reason. */
export async function listRefusalWindows(
  tx: Tx,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: Array<{ windowStart: string; refused: number; reasons: Record<string, number> }>; total: number; refused: number }> {
  const [rows, [totals]] = await Promise.all([
    tx<Array<{ windowStart: string; refused: number; reasons: Record<string, number> }>>`
      select ${tx.unsafe(isoTimestamp('window_start'))} as "windowStart", sum(refused)::float8 as refused,
             jsonb_object_agg(reason, refused order by reason) as reasons
      from webhook_refusal_counts where tenant_id = current_tenant_id() and endpoint_id = ${endpointId}::uuid
      group by window_start order by window_start desc limit ${page.limit} offset ${page.offset}`,
    tx<[{ total: number; refused: number }]>`
      select count(distinct window_start)::int as total, coalesce(sum(refused), 0)::float8 as refused
      from webhook_refusal_counts where tenant_id = current_tenant_id() and endpoint_id = ${endpointId}::uuid`,
  ]);
  return { rows, total: totals.total, refused: totals.refused };
}

/** A delivery as recorded; `payload` only for verified ones. */
export interface NewDelivery {
  endpointId: string;
  source: string;
  status: 'accepted' | 'failed' | 'rejected';
  reason?: DeliveryReason;
  message?: string;
  externalId?: string;
  signature?: string;
  signedAt?: number;
  sizeBytes: number;
  contentType?: string;
  userAgent?: string;
  payload?: Record<string, unknown>;
  replayOf?: string;
  replayedBy?: string;
}

/**
 * Records a delivery in the current tenant, and forgets the endpoint's deliveries past their
 * retention. Undefined when a verified delivery's signature or sender's id was taken already (a replay).
 */
export async function insertDelivery(tx: Tx, delivery: NewDelivery): Promise<Delivery | undefined> {
  await tx`delete from webhook_deliveries where tenant_id = current_tenant_id() and endpoint_id = ${delivery.endpointId}::uuid and received_at < now() - ${tx.unsafe(DELIVERY_RETENTION)}`;
  const rows = await tx.unsafe<Delivery[]>(
    `insert into webhook_deliveries (tenant_id, endpoint_id, source, status, reason, message, external_id, signature, signed_at, size_bytes, content_type, user_agent, payload, replay_of, replayed_by)
     values (current_tenant_id(), $1::uuid, $2, $3, $4, $5, $6, $7, to_timestamp($8::float8), $9, $10, $11, $12::text::jsonb, $13::uuid, $14::uuid)
     on conflict do nothing
     returning ${DELIVERY_COLUMNS}`,
    [
      delivery.endpointId,
      delivery.source,
      delivery.status,
      delivery.reason ?? null,
      delivery.message ?? null,
      delivery.externalId ?? null,
      delivery.signature ?? null,
      delivery.signedAt ?? null,
      delivery.sizeBytes,
      delivery.contentType ?? null,
      delivery.userAgent ?? null,
      delivery.payload === undefined ? null : JSON.stringify(delivery.payload),
      delivery.replayOf ?? null,
      delivery.replayedBy || null,
    ],
  );
  return rows[0];
}

/** Marks a verified delivery's outcome: the execution it started, or why it could not start one. */
export async function settleDelivery(tx: Tx, id: string, outcome: { executionId: string } | { failed: string }): Promise<Delivery> {
  const rows = await tx.unsafe<Delivery[]>(
    `update webhook_deliveries set execution_id = $2::uuid, status = case when $2 is null then 'failed' else status end,
       reason = case when $2 is null then 'workflow_unavailable' else reason end, message = $3
     where tenant_id = current_tenant_id() and id = $1::uuid returning ${DELIVERY_COLUMNS}`,
    [id, 'executionId' in outcome ? outcome.executionId : null, 'failed' in outcome ? outcome.failed : null],
  );
  return rows[0]!;
}

export async function listDeliveries(tx: Tx, endpointId: string, filter: Omit<ListDeliveriesInput, 'source'>): Promise<{ rows: Delivery[]; total: number }> {
  const status = filter.status ?? null;
  const [rows, totals] = await Promise.all([
    tx.unsafe<Delivery[]>(
      `select ${DELIVERY_COLUMNS} from webhook_deliveries
       where tenant_id = current_tenant_id() and endpoint_id = $1::uuid and ($2::text is null or status = $2)
       order by received_at desc, id desc limit $3 offset $4`,
      [endpointId, status, filter.limit, filter.offset],
    ),
    tx<{ total: number }[]>`select count(*)::int as total from webhook_deliveries
      where tenant_id = current_tenant_id() and endpoint_id = ${endpointId}::uuid and (${status}::text is null or status = ${status})`,
  ]);
  return { rows, total: totals[0]!.total };
}

export async function findDelivery(tx: Tx, id: string): Promise<(DeliveryDetail & { workflowId: string | null }) | undefined> {
  const rows = await tx.unsafe<(DeliveryDetail & { workflowId: string | null })[]>(
    `select ${DELIVERY_COLUMNS}, payload, (select e.workflow_id from webhook_endpoints e where e.id = d.endpoint_id) as "workflowId"
     from webhook_deliveries d where tenant_id = current_tenant_id() and id = $1::uuid`,
    [id],
  );
  return rows[0];
}
