import { Client, Connection } from '@temporalio/client';

/** The statuses of every run of `workflowId` (`RUNNING`, `COMPLETED`…), as the Temporal server lists them. */
export async function runStatuses(client: Client, workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run.status.name);
  return runs;
}

/** The same, asked over a connection of its own to the server at `temporal.address`. */
export async function runStatusesAt(temporal: { address: string; namespace: string }, workflowId: string): Promise<string[]> {
  const connection = await Connection.connect({ address: temporal.address });
  try {
    return await runStatuses(new Client({ connection, namespace: temporal.namespace }), workflowId);
  } finally {
    await connection.close();
  }
}
