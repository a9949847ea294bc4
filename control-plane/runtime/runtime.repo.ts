import type { Tx } from '../db/client.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import type { RuntimeRequest } from './runtime.schema.ts';

const REQUEST_COLUMNS = `id::text as id, tenant_id::text as "tenantId", workflow_key as "workflowKey", display_name as "displayName", reason, state,
  requested_by::text as "requestedBy", ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** Records a pending request for the workflow; undefined when one is already pending. */
export async function insertRequest(tx: Tx, request: { workflowKey: string; displayName: string; reason: string; requestedBy: string | null }): Promise<RuntimeRequest | undefined> {
  const rows = await tx.unsafe<RuntimeRequest[]>(
    `insert into workflow_runtime_requests (tenant_id, workflow_key, display_name, reason, requested_by)
     values (current_tenant_id(), $1, $2, $3, $4::uuid)
     on conflict (tenant_id, workflow_key) where state = 'pending' do nothing
     returning ${REQUEST_COLUMNS}`,
    [request.workflowKey, request.displayName, request.reason, request.requestedBy],
    { prepare: true },
  );
  return rows[0];
}

export async function findPendingRequest(tx: Tx, workflowKey: string): Promise<RuntimeRequest | undefined> {
  const rows = await tx.unsafe<RuntimeRequest[]>(
    `select ${REQUEST_COLUMNS} from workflow_runtime_requests where tenant_id = current_tenant_id() and workflow_key = $1 and state = 'pending'`,
    [workflowKey],
    { prepare: true },
  );
  return rows[0];
}
