import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { Tx } from '../db/client.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import type { EventKind } from './realtime.schema.ts';

/** An event as read from the log; `ageMs` is how long ago it was committed, by the database's clock. */
export interface LoggedEvent {
  seq: number;
  kind: EventKind;
  type: string;
  id: string;
  version: number;
  action: string | null;
  at: string;
  ageMs: number;
}

/** Events of the current tenant after `afterSeq`, oldest first, at most `limit`. */
export function eventsAfter(tx: Tx, afterSeq: number, limit: number): PendingQuery<(LoggedEvent & Row)[]> {
  return tx<(LoggedEvent & Row)[]>`
    select seq::float8 as seq, kind, resource_type as type, resource_id::text as id, version, action, ${tx.unsafe(isoTimestamp('at'))} as at,
           greatest(0, extract(epoch from clock_timestamp() - at) * 1000)::int as "ageMs"
    from realtime_events where tenant_id = current_tenant_id() and seq > ${afterSeq} order by seq limit ${limit}`;
}

export interface StreamHead {
  lastSeq: number;
  retain: number;
  dropped: number;
  lastDroppedAt: string | null;
  oldestSeq: number | null;
}

/** The current tenant's stream: its newest event, retention and drop count; undefined before its first negotiation. */
export async function streamHead(tx: Tx): Promise<StreamHead | undefined> {
  const [row] = await tx<StreamHead[]>`
    select last_seq::float8 as "lastSeq", retain, dropped::float8 as dropped, ${tx.unsafe(isoTimestamp('last_dropped_at'))} as "lastDroppedAt",
           (select min(seq)::float8 from realtime_events e where e.tenant_id = s.tenant_id) as "oldestSeq"
    from realtime_streams s where tenant_id = current_tenant_id()`;
  return row;
}

/** Platform work: starts recording the tenant's changes (idempotent); its newest event's number. */
export async function ensureStream(sql: Sql | Tx, tenantId: string): Promise<number> {
  const [row] = await sql<{ lastSeq: number }[]>`
    with made as (insert into realtime_streams (tenant_id) values (${tenantId}::uuid) on conflict (tenant_id) do nothing returning last_seq)
    select coalesce((select last_seq from made), (select last_seq from realtime_streams where tenant_id = ${tenantId}::uuid))::float8 as "lastSeq"`;
  return row!.lastSeq;
}

/** Platform work: the newest event's number of each of these tenants (0 for one not recorded). */
export async function lastSeqs(sql: Sql, tenantIds: string[]): Promise<Map<string, number>> {
  const rows = await sql<{ tenantId: string; lastSeq: number }[]>`
    select tenant_id::text as "tenantId", last_seq::float8 as "lastSeq" from realtime_streams where tenant_id = any(${tenantIds}::uuid[])`;
  return new Map(rows.map((r) => [r.tenantId, r.lastSeq]));
}

/** Platform work: counts events that a connection missed because the log no longer held them. */
export async function countDropped(sql: Sql, tenantId: string, dropped: number): Promise<void> {
  await sql`update realtime_streams set dropped = dropped + ${dropped}, last_dropped_at = date_trunc('milliseconds', now()) where tenant_id = ${tenantId}::uuid`;
}

/** What one instance reports of one tenant's connections. */
export interface DeliveryReport {
  tenantId: string;
  connections: number;
  catchingUp: number;
  readSeq: number;
  queued: number;
  lagMs: number;
  listening: boolean;
}

/** Platform work: replaces this instance's reports (a tenant it no longer serves loses its row). */
export async function report(sql: Sql, instanceId: string, reports: DeliveryReport[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from realtime_deliveries where instance_id = ${instanceId} and not (tenant_id = any(${reports.map((r) => r.tenantId)}::uuid[]))`;
    for (const r of reports) {
      await tx`
        insert into realtime_deliveries (instance_id, tenant_id, connections, catching_up, read_seq, queued, lag_ms, listening, reported_at)
        values (${instanceId}, ${r.tenantId}::uuid, ${r.connections}, ${r.catchingUp}, ${r.readSeq}, ${r.queued}, ${r.lagMs}, ${r.listening}, now())
        on conflict (instance_id, tenant_id) do update set connections = excluded.connections, catching_up = excluded.catching_up, read_seq = excluded.read_seq,
          queued = excluded.queued, lag_ms = excluded.lag_ms, listening = excluded.listening, reported_at = excluded.reported_at`;
    }
  });
}

/** Platform work: connections of the tenant that other instances reported lately. */
export async function connectionsElsewhere(sql: Sql, instanceId: string, tenantId: string, freshSeconds: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(connections), 0)::int as n from realtime_deliveries
    where tenant_id = ${tenantId}::uuid and instance_id <> ${instanceId} and reported_at > now() - make_interval(secs => ${freshSeconds})`;
  return row!.n;
}

/** The current tenant's fresh delivery reports, one per instance. */
export function freshReports(tx: Tx, freshSeconds: number) {
  return tx<(DeliveryReport & { instanceId: string })[]>`
    select instance_id as "instanceId", tenant_id::text as "tenantId", connections, catching_up as "catchingUp", read_seq::float8 as "readSeq",
           queued, lag_ms as "lagMs", listening
    from realtime_deliveries where tenant_id = current_tenant_id() and reported_at > now() - make_interval(secs => ${freshSeconds})`;
}

/** A signing key as stored: sealed with the operator key, or (written by an earlier version, until sealed) the key itself. */
export interface StoredSigningKey {
  secret: Uint8Array | null;
  sealedSecret: string | null;
}

/** A signing key: its number (the tokens' `kid`), stored secret and age by the database's clock. */
export interface SigningKey {
  id: number;
  stored: StoredSigningKey;
  ageMs: number;
}

/** The signing key after a rotation, and the keys before it that still verify, until when. */
export interface SigningKeys {
  current: SigningKey & { createdAt: string };
  verifying: Array<{ id: number; retiresAt: string }>;
}

const storedOf = (row: { secret: Buffer | null; sealedSecret: string | null }): StoredSigningKey => ({
  secret: row.secret && new Uint8Array(row.secret),
  sealedSecret: row.sealedSecret,
});

/** Platform work: the key that signs new tokens (the newest not retiring), if any. */
export async function currentSigningKey(sql: Sql | TransactionSql): Promise<SigningKey | undefined> {
  const [row] = await sql<{ id: number; secret: Buffer | null; sealedSecret: string | null; ageMs: number }[]>`
    select id, secret, sealed_secret as "sealedSecret", extract(epoch from now() - created_at)::float8 * 1000 as "ageMs"
    from realtime_signing_keys where retires_at is null order by id desc limit 1`;
  return row && { id: row.id, stored: storedOf(row), ageMs: row.ageMs };
}

/** Platform work: the key numbered `id`, and whether it no longer verifies; undefined for one unknown or deleted. */
export async function verifyingKey(sql: Sql, id: number): Promise<{ stored: StoredSigningKey; retired: boolean } | undefined> {
  const [row] = await sql<{ secret: Buffer | null; sealedSecret: string | null; retired: boolean }[]>`
    select secret, sealed_secret as "sealedSecret", coalesce(retires_at <= now(), false) as retired from realtime_signing_keys where id = ${id}`;
  return row && { stored: storedOf(row), retired: row.retired };
}

/**
 * Platform work: makes a new signing key, stored as `sealFor` seals it for its number; the keys
 * before it verify for `overlapMs` more (none shortened if it retires sooner), and keys retired a
 * day ago are deleted. With `unlessYoungerThanMs`, a signing key younger than that (another
 * instance rotated meanwhile) stays and nothing changes. Rotations of all instances take turns (a
 * table lock that readers pass).
 */
export async function rotateSigningKey(
  sql: Sql,
  sealFor: (id: number) => string,
  options: { overlapMs: number; unlessYoungerThanMs?: number },
): Promise<SigningKeys> {
  return sql.begin(async (tx) => {
    await tx`lock table realtime_signing_keys in exclusive mode`;
    const current = options.unlessYoungerThanMs === undefined ? undefined : await currentSigningKey(tx);
    let made: SigningKey & { createdAt: string };
    if (current && current.ageMs < options.unlessYoungerThanMs!) {
      const [row] = await tx<{ createdAt: string }[]>`select ${tx.unsafe(isoTimestamp('created_at'))} as "createdAt" from realtime_signing_keys where id = ${current.id}`;
      made = { ...current, createdAt: row!.createdAt };
    } else {
      const [next] = await tx<{ id: number }[]>`select coalesce(max(id), 0) + 1 as id from realtime_signing_keys`;
      const sealedSecret = sealFor(next!.id);
      const [row] = await tx<{ createdAt: string }[]>`
        insert into realtime_signing_keys (id, sealed_secret) values (${next!.id}, ${sealedSecret})
        returning ${tx.unsafe(isoTimestamp('created_at'))} as "createdAt"`;
      made = { id: next!.id, stored: { secret: null, sealedSecret }, ageMs: 0, createdAt: row!.createdAt };
      await tx`
        update realtime_signing_keys set retires_at = now() + make_interval(secs => ${options.overlapMs / 1000})
        where id <> ${made.id} and (retires_at is null or retires_at > now() + make_interval(secs => ${options.overlapMs / 1000}))`;
      await tx`delete from realtime_signing_keys where retires_at < now() - interval '1 day'`;
    }
    const verifying = await tx<{ id: number; retiresAt: string }[]>`
      select id, ${tx.unsafe(isoTimestamp('retires_at'))} as "retiresAt" from realtime_signing_keys
      where id <> ${made.id} and retires_at > now() order by id`;
    return { current: made, verifying: [...verifying] };
  });
}

/** Platform work: the keys stored in plain text or sealed under a key other than the one `like` names. */
export async function keysNotSealedLike(sql: Sql, like: string): Promise<Array<{ id: number; stored: StoredSigningKey }>> {
  const rows = await sql<{ id: number; secret: Buffer | null; sealedSecret: string | null }[]>`
    select id, secret, sealed_secret as "sealedSecret" from realtime_signing_keys where sealed_secret is null or sealed_secret not like ${like}`;
  return rows.map((row) => ({ id: row.id, stored: storedOf(row) }));
}

/** Platform work: stores a key sealed anew (and forgets its plain form), unless the row changed meanwhile. */
export async function resealKey(sql: Sql, id: number, was: StoredSigningKey, sealedSecret: string): Promise<void> {
  await sql`
    update realtime_signing_keys set sealed_secret = ${sealedSecret}, secret = null
    where id = ${id} and sealed_secret is not distinct from ${was.sealedSecret}`;
}

/** Platform work: records that the ticket opened a connection; false when one did before. */
export async function consumeTicket(sql: Sql, ticket: string, expiresAt: Date): Promise<boolean> {
  const rows = await sql`insert into realtime_tickets (jti, expires_at) values (${ticket}::uuid, ${expiresAt}) on conflict (jti) do nothing returning 1`;
  return rows.length === 1;
}

/** Platform work: forgets tickets whose tokens have expired (those cannot connect anyway). */
export async function pruneTickets(sql: Sql): Promise<void> {
  await sql`delete from realtime_tickets where expires_at < now()`;
}
