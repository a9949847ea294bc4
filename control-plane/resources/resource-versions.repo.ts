import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';
import type { ResourceVersion, ResourceVersionOperation } from './resources.schema.ts';

/** One change as the engine records it: the resource after it (before it, for a delete). */
export interface VersionEntry {
  id: string;
  type: string;
  version: number;
  operation: ResourceVersionOperation;
  /** The action's name when `operation` is `action`. */
  action?: string;
  data: Record<string, unknown>;
  actor: string | null;
}

/** Appends one entry to the resource's history; `at` is the time of the transaction, as the resource's own timestamps. */
export async function insertVersion(tx: Tx, entry: VersionEntry): Promise<void> {
  await tx.unsafe(
    `insert into resource_versions (tenant_id, resource_id, type, version, operation, action, data, actor, at)
     values (current_tenant_id(), $1::uuid, $2, $3::int, $4, $5, $6::text::jsonb, nullif($7, '')::uuid, ${NOW_MS})`,
    [entry.id, entry.type, entry.version, entry.operation, entry.action ?? null, JSON.stringify(entry.data), entry.actor ?? ''],
    { prepare: true },
  );
}

/** A page of the resource's history, newest first, and how many entries it has in all. */
export async function selectVersions(tx: Tx, type: string, id: string, limit: number, offset: number): Promise<{ rows: ResourceVersion[]; total: number }> {
  if (!UUID.test(id)) return { rows: [], total: 0 };
  const [rows, totals] = await Promise.all([
    tx.unsafe<ResourceVersion[]>(
      `select version, operation, action, data, actor::text as by, ${isoTimestamp('at')} as at
       from resource_versions where tenant_id = current_tenant_id() and resource_id = $1::uuid and type = $2
       order by version desc limit $3::int offset $4::int`,
      [id, type, limit, offset],
      { prepare: true },
    ),
    tx.unsafe<{ total: number }[]>(
      `select count(*)::int as total from resource_versions where tenant_id = current_tenant_id() and resource_id = $1::uuid and type = $2`,
      [id, type],
      { prepare: true },
    ),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}
