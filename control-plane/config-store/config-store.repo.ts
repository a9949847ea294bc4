import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import type { ConfigAuditEvent, ConfigSetSummary, ListConfigAuditInput } from './config-store.schema.ts';

/** An entry as stored: a secret's value sealed, an entry that is not a secret's value plain. */
export interface StoredEntry {
  key: string;
  secret: boolean;
  value: string | null;
  sealedValue: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  updated_by: string | null;
}

/** Names one configuration set of the transaction's tenant. */
export interface SetRef {
  label: string;
  environment: string;
}

const ENTRY_COLUMNS = `key, secret, value, sealed_value as "sealedValue", version,
  ${isoTimestamp('created_at')} as created_at, ${isoTimestamp('updated_at')} as updated_at, updated_by::text as updated_by`;

export function listEntries(tx: Tx, set: SetRef, options: { forUpdate?: boolean } = {}): Promise<StoredEntry[]> {
  return tx.unsafe<StoredEntry[]>(
    `select ${ENTRY_COLUMNS} from config_entries
     where tenant_id = current_tenant_id() and label = $1 and environment = $2
     order by key${options.forUpdate ? ' for update' : ''}`,
    [set.label, set.environment],
  );
}

/** Inserts or replaces an entry; the version counts from 1. */
export async function upsertEntry(
  tx: Tx,
  set: SetRef,
  entry: { key: string; secret: boolean; value: string | null; sealedValue: string | null },
  actorId: string,
): Promise<StoredEntry> {
  const rows = await tx.unsafe<StoredEntry[]>(
    `insert into config_entries (tenant_id, label, environment, key, secret, value, sealed_value, created_by, updated_by)
     values (current_tenant_id(), $1, $2, $3, $4, $5, $6, nullif($7, '')::uuid, nullif($7, '')::uuid)
     on conflict (tenant_id, label, environment, key) do update set
       secret = excluded.secret, value = excluded.value, sealed_value = excluded.sealed_value,
       version = config_entries.version + 1, updated_by = excluded.updated_by, updated_at = ${NOW_MS}
     returning ${ENTRY_COLUMNS}`,
    [set.label, set.environment, entry.key, entry.secret, entry.value, entry.sealedValue, actorId],
  );
  return rows[0]!;
}

export async function deleteEntry(tx: Tx, set: SetRef, key: string): Promise<{ secret: boolean } | undefined> {
  const rows = await tx<{ secret: boolean }[]>`
    delete from config_entries where tenant_id = current_tenant_id() and label = ${set.label} and environment = ${set.environment} and key = ${key}
    returning secret`;
  return rows[0];
}

export async function countEntries(tx: Tx, set: SetRef): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    select count(*)::int as n from config_entries where tenant_id = current_tenant_id() and label = ${set.label} and environment = ${set.environment}`;
  return row!.n;
}

/** The tenant's sets, by label and environment. */
export function listSets(tx: Tx): Promise<ConfigSetSummary[]> {
  return tx.unsafe<ConfigSetSummary[]>(
    `select label, environment, count(*)::int as entries, (count(*) filter (where secret))::int as secrets, ${isoTimestamp('max(updated_at)')} as updated_at
     from config_entries where tenant_id = current_tenant_id()
     group by label, environment order by label, environment`,
  );
}

export interface AuditRecord {
  label: string;
  environment: string;
  key: string | null;
  action: ConfigAuditEvent['action'];
  secret: boolean | null;
}

/** Appends audit events: who did what to which key, never a value. */
export async function insertAudit(tx: Tx, actor: { userId: string; email: string }, records: AuditRecord[]): Promise<void> {
  if (!records.length) return;
  await tx.unsafe(
    `insert into config_audit (tenant_id, label, environment, key, action, secret, actor_id, actor_email)
     select current_tenant_id(), r.label, r.environment, r.key, r.action, r.secret, nullif($2, '')::uuid, nullif($3, '')
     from jsonb_to_recordset($1::text::jsonb) as r(label text, environment text, key text, action text, secret boolean)`,
    [JSON.stringify(records), actor.userId, actor.email],
  );
}

export async function listAudit(tx: Tx, filter: ListConfigAuditInput): Promise<{ rows: ConfigAuditEvent[]; total: number }> {
  const where = `tenant_id = current_tenant_id() and ($1::text is null or label = $1) and ($2::text is null or environment = $2) and ($3::text is null or key = $3)`;
  const params = [filter.label ?? null, filter.environment ?? null, filter.key ?? null];
  const [rows, totals] = await Promise.all([
    tx.unsafe<ConfigAuditEvent[]>(
      `select id::text as id, label, environment, key, action, secret, actor_id::text as actor_id, actor_email, ${isoTimestamp('at')} as at
       from config_audit where ${where} order by at desc, id desc limit $4 offset $5`,
      [...params, filter.limit, filter.offset],
    ),
    tx.unsafe<{ total: number }[]>(`select count(*)::int as total from config_audit where ${where}`, params),
  ]);
  return { rows, total: totals[0]!.total };
}

/** A secret entry's sealed value, as the re-sealing pass reads it. */
export interface SealedEntry {
  tenantId: string;
  label: string;
  environment: string;
  key: string;
  sealedValue: string;
}

/** Platform work: secret entries whose value is not sealed under the key `like` names. */
export function sealedNotLike(tx: Tx, like: string): Promise<SealedEntry[]> {
  return tx<SealedEntry[]>`
    select tenant_id::text as "tenantId", label, environment, key, sealed_value as "sealedValue" from config_entries
    where secret and sealed_value not like ${like}`;
}

/** Platform work: stores an entry's value sealed anew, unless the entry changed meanwhile. The entry's version stays: its value did not change. */
export async function resealEntry(tx: Tx, was: SealedEntry, sealedValue: string): Promise<void> {
  await tx`
    update config_entries set sealed_value = ${sealedValue}
    where tenant_id = ${was.tenantId}::uuid and label = ${was.label} and environment = ${was.environment} and key = ${was.key} and sealed_value = ${was.sealedValue}`;
}
