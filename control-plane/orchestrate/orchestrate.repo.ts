import type { Tx } from '../db/client.ts';
import type { Execution, ExecutionState, StepDefinition, StepState, WorkflowDefinition } from './orchestrate.schema.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';

const EXECUTION_COLUMNS = `id::text as id, workflow_id as "workflowId", state, input, output, error, metadata, steps,
  ${isoTimestamp('started_at')} as "startedAt", ${isoTimestamp('completed_at')} as "completedAt"`;

export async function listDefinitions(tx: Tx): Promise<WorkflowDefinition[]> {
  return tx<WorkflowDefinition[]>`
    select id, name, description, version, steps from workflow_definitions where tenant_id = current_tenant_id() order by name, id`;
}

export async function findDefinition(tx: Tx, id: string): Promise<WorkflowDefinition | undefined> {
  const rows = await tx<WorkflowDefinition[]>`
    select id, name, description, version, steps from workflow_definitions where tenant_id = current_tenant_id() and id = ${id}`;
  return rows[0];
}

/** Inserts or updates a definition; idempotent. */
export async function upsertDefinition(tx: Tx, definition: WorkflowDefinition): Promise<void> {
  await tx`
    insert into workflow_definitions (tenant_id, id, name, description, version, steps)
    values (current_tenant_id(), ${definition.id}, ${definition.name}, ${definition.description}, ${definition.version}, ${tx.json(definition.steps as never)})
    on conflict (tenant_id, id) do update set name = excluded.name, description = excluded.description,
      version = excluded.version, steps = excluded.steps, updated_at = date_trunc('milliseconds', now())`;
}

export async function insertExecution(
  tx: Tx,
  execution: { workflowId: string; version: string; input: object; metadata: object; steps: StepState[]; createdBy: string },
): Promise<Execution> {
  const rows = await tx.unsafe<Execution[]>(
    `insert into executions (tenant_id, workflow_id, workflow_version, state, input, metadata, steps, created_by)
     values (current_tenant_id(), $1, $2, 'running', $3::text::jsonb, $4::text::jsonb, $5::text::jsonb, nullif($6, '')::uuid)
     returning ${EXECUTION_COLUMNS}`,
    [execution.workflowId, execution.version, JSON.stringify(execution.input), JSON.stringify(execution.metadata), JSON.stringify(execution.steps), execution.createdBy],
    { prepare: true },
  );
  return rows[0]!;
}

/**
 * Serializes the starts of the current tenant's executions until the transaction ends, so that two
 * starts cannot both see room under the concurrency limit.
 */
export async function lockTenantStarts(tx: Tx): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('svc.execution_starts'), hashtext(current_tenant_id()::text))`;
}

/** The current tenant's executions still running. */
export async function countRunningExecutions(tx: Tx): Promise<number> {
  const [row] = await tx<[{ count: number }]>`select count(*)::int as count from executions where tenant_id = current_tenant_id() and state = 'running'`;
  return row.count;
}

export async function findExecution(tx: Tx, id: string, forUpdate = false): Promise<(Execution & { createdBy: string | null }) | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<(Execution & { createdBy: string | null })[]>(
    `select ${EXECUTION_COLUMNS}, created_by::text as "createdBy" from executions where tenant_id = current_tenant_id() and id = $1::uuid${forUpdate ? ' for update' : ''}`,
    [id],
    { prepare: true },
  );
  return rows[0];
}

export async function listExecutions(
  tx: Tx,
  filter: { workflowId?: string; state?: string; limit: number; offset: number },
): Promise<{ items: Execution[]; total: number }> {
  const where = `tenant_id = current_tenant_id() and ($1::text is null or workflow_id = $1::text) and ($2::text is null or state = $2::text)`;
  const params = [filter.workflowId ?? null, filter.state ?? null];
  const [items, totals] = await Promise.all([
    tx.unsafe<Execution[]>(`select ${EXECUTION_COLUMNS} from executions where ${where} order by started_at desc, id limit $3::text::int offset $4::text::int`, [
      ...params,
      String(filter.limit),
      String(filter.offset),
    ] as never[], { prepare: true }),
    tx.unsafe<{ total: number }[]>(`select count(*)::int as total from executions where ${where}`, params as never[], { prepare: true }),
  ]);
  return { items, total: totals[0]?.total ?? 0 };
}

export async function writeSteps(tx: Tx, id: string, steps: StepState[]): Promise<void> {
  await tx.unsafe(`update executions set steps = $2::text::jsonb where id = $1::uuid and state = 'running'`, [id, JSON.stringify(steps)], { prepare: true });
}

/** Closes a running execution; a closed one keeps its final state (the update is idempotent). */
export async function closeExecution(
  tx: Tx,
  id: string,
  outcome: { state: ExecutionState; steps: StepState[]; output?: object; error?: { message: string } },
): Promise<void> {
  await tx.unsafe(
    `update executions set state = $2, steps = $3::text::jsonb, output = $4::text::jsonb, error = $5::text::jsonb,
       completed_at = ${NOW_MS}
     where id = $1::uuid and state = 'running'`,
    [id, outcome.state, JSON.stringify(outcome.steps), outcome.output ? JSON.stringify(outcome.output) : null, outcome.error ? JSON.stringify(outcome.error) : null],
    { prepare: true },
  );
}

export type { StepDefinition };
