import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { INDEX_DOCUMENT } from '../../control-plane/temporal/workflow-contract.ts';
import { createDocsTenant, form, postForm } from '../harness/documents.ts';
import { V3, type TestStack } from '../harness/stack.ts';
import { startStackBehindTemporalProxy } from '../harness/temporal-proxy.ts';
import { BLACKHOLE, startToxiproxy, type Toxiproxy } from '../harness/toxiproxy.ts';
import { until } from '../harness/until.ts';

/**
 * A document uploaded for indexing while the network path to Temporal is blackholed (toxiproxy):
 * the upload answers 201 with the document and its job committed, the job reads `queued` while
 * its start waits in the outbox, and once Temporal is back the job runs, once
 * (docs/guarantees.md, "Temporal is down"; docs/decisions/0146-workflow-outbox.md). A start whose
 * answer the blackhole swallowed may leave the document's reused workflow id with a second run: it
 * finds the job closed and ends without work, as the outbox's record says.
 */
describe('indexing a document while Temporal is unreachable', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack | undefined;
  let toxiproxy: Toxiproxy | undefined;
  afterAll(async () => {
    await stack?.close();
    await toxiproxy?.close();
    await sql.end();
  }, 60_000);

  it('answers the upload 201 with its job queued, and runs the job once after the path is back', async () => {
    const team = await createDocsTenant(sql, 'team', 'index-fault');
    toxiproxy = await startToxiproxy();
    const behind = await startStackBehindTemporalProxy(toxiproxy, { devUsers: [...DEV_USERS, team.admin] });
    const { temporal, proxy } = behind;
    stack = behind.stack;
    const token = await stack.token(team.admin.email);

    await proxy.add('fault', BLACKHOLE);
    const text = 'The Porto warehouse lease ends in June. The harbour crane is inspected every spring.';
    const asked = Date.now();
    const created = await postForm(stack, `${V3}/documents`, token, form([{ filename: 'porto.txt', bytes: new TextEncoder().encode(text) }, ['autoIndex', 'true'], ['autoClassify', 'false']]));
    const answeredMs = Date.now() - asked;
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: string = created.body.id;
    expect(created.body).toMatchObject({ id, filename: 'porto.txt', indexed: false });
    // Answered within the start's 5 s wait and a busy machine's margin.
    expect(answeredMs).toBeLessThan(10_000);

    const jobs = () => sql<{ state: string }[]>`select state from document_jobs where document_id = ${id}::uuid`;
    const waiting = () => sql<{ workflowId: string }[]>`select workflow_id as "workflowId" from workflow_outbox where tenant_id = ${team.id}::uuid`;
    expect(await jobs()).toEqual([{ state: 'queued' }]);
    expect(await waiting()).toEqual([{ workflowId: INDEX_DOCUMENT.workflowId(id) }]);
    await sleep(2_000);
    expect(await jobs()).toEqual([{ state: 'queued' }]);

    await proxy.remove('fault');
    const removedAt = Date.now();
    const document = () => stack!.request('GET', `${V3}/documents/${id}`, { token });
    const done = await until(document, (r) => r.body.status === 'ready' || r.body.status === 'failed', 150_000);
    process.stderr.write(`[document-index-faults] upload answered in ${answeredMs} ms; document ready ${Date.now() - removedAt} ms after the fault was removed\n`);
    expect(done.body).toMatchObject({ status: 'ready', indexed: true, failureReason: null });
    expect(await jobs()).toEqual([{ state: 'completed' }]);
    // Exactly one run of the document's workflow did the job; any other ended at once, doing nothing.
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const client = new Client({ connection, namespace: temporal.namespace });
      const workflowId = INDEX_DOCUMENT.workflowId(id);
      const results: Array<{ chunks: number | null }> = [];
      for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) results.push(await client.workflow.getHandle(workflowId, run.runId).result());
      process.stderr.write(`[document-index-faults] runs of ${workflowId}: ${JSON.stringify(results)}\n`);
      expect(results.filter((result) => result.chunks !== null)).toEqual([{ chunks: done.body.chunkCount }]);
      expect(results.length).toBeLessThanOrEqual(2);
    } finally {
      await connection.close();
    }
    expect(await waiting()).toEqual([]);
    // Its chunks stored once: as many as the record counts.
    const [{ chunks }] = await sql<[{ chunks: number }]>`select count(*)::int as chunks from search_chunks where source_kind = 'document' and source_id = ${id}`;
    expect(chunks).toBeGreaterThan(0);
    expect(chunks).toBe(done.body.chunkCount);
  }, 240_000);
});
