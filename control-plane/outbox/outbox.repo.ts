import type { Tx } from '../db/client.ts';

/** A workflow start waiting in the outbox. */
export interface OutboxRow {
  id: string;
  tenantId: string;
  workflowType: string;
  workflowId: string;
  workflowKey: string;
  args: unknown[];
  reusesId: boolean;
  attempts: number;
}

/**
 * Writes a start in the caller's transaction, due `graceMs` from now (the writer starts it itself
 * before then): for the transaction's tenant, or for `tenantId` in a platform transaction. With
 * `unlessWaiting`, nothing is written (undefined) while a start of the same workflow id waits.
 */
export async function insertOutboxRow(
  tx: Tx,
  row: {
    taskQueue: string;
    workflowType: string;
    workflowId: string;
    workflowKey: string;
    args: unknown[];
    reusesId: boolean;
    graceMs: number;
    tenantId?: string;
    unlessWaiting?: boolean;
  },
): Promise<string | undefined> {
  const [inserted] = await tx.unsafe<{ id: string }[]>(
    `insert into workflow_outbox (tenant_id, task_queue, workflow_type, workflow_id, workflow_key, args, reuses_id, due_at)
     select coalesce($8::uuid, current_tenant_id()), $1, $2, $3, $4, $5::text::jsonb, $6, now() + $7::int * interval '1 ms'
      where not ($9::boolean and exists (select 1 from workflow_outbox where workflow_id = $3))
     returning id::text as id`,
    [
      row.taskQueue,
      row.workflowType,
      row.workflowId,
      row.workflowKey,
      JSON.stringify(row.args),
      row.reusesId,
      row.graceMs,
      row.tenantId ?? null,
      row.unlessWaiting ?? false,
    ] as never[],
    { prepare: true },
  );
  return inserted?.id;
}

/**
 * Platform work: claims up to `limit` rows of the queue that are due (or only row `id`, if nobody
 * has claimed it yet), skipping rows another process is claiming, and leases them for `leaseMs`:
 * nobody else claims them until then.
 */
export function claimOutboxRows(tx: Tx, taskQueue: string, options: { limit: number; leaseMs: number; id?: string }): Promise<OutboxRow[]> {
  return tx.unsafe<OutboxRow[]>(
    `with claimed as (
       select id from workflow_outbox
        where task_queue = $1 and (case when $4::bigint is null then due_at <= now() else id = $4::bigint and attempts = 0 end)
        order by due_at limit $2::int for update skip locked)
     update workflow_outbox o set due_at = now() + $3::int * interval '1 ms', attempts = o.attempts + 1 from claimed where o.id = claimed.id
     returning o.id::text as id, o.tenant_id::text as "tenantId", o.workflow_type as "workflowType", o.workflow_id as "workflowId",
       o.workflow_key as "workflowKey", o.args, o.reuses_id as "reusesId", o.attempts`,
    [taskQueue, options.limit, options.leaseMs, options.id ?? null] as never[],
  );
}

/** The row's run is started: it leaves the outbox. */
export async function deleteOutboxRow(tx: Tx, id: string): Promise<void> {
  await tx.unsafe(`delete from workflow_outbox where id = $1::bigint`, [id], { prepare: true });
}

/** Platform work: removes every start waiting for `tenantId`, claimed or not (its tenant is deleted); answers how many. */
export async function deleteTenantOutboxRows(tx: Tx, tenantId: string): Promise<number> {
  const removed = await tx.unsafe(`delete from workflow_outbox where tenant_id = $1::uuid returning id`, [tenantId], { prepare: true });
  return removed.length;
}

/** Rows claimed but not tried (their claimant stopped trying): due again now, their claim not counted as an attempt. */
export async function releaseOutboxRows(tx: Tx, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await tx.unsafe(`update workflow_outbox set due_at = now(), attempts = attempts - 1 where id = any($1::bigint[])`, [ids] as never[], { prepare: true });
}

/** The start failed: the row is due again after `delayMs`, with the failure's message. */
export async function postponeOutboxRow(tx: Tx, id: string, delayMs: number, error: string): Promise<void> {
  await tx.unsafe(`update workflow_outbox set due_at = now() + $2::int * interval '1 ms', last_error = $3 where id = $1::bigint`, [id, delayMs, error.slice(0, 1000)] as never[], {
    prepare: true,
  });
}
