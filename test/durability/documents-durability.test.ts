import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { chunkSegments } from '../../control-plane/documents/chunking.ts';
import { createExtractor } from '../../control-plane/extract/extractor.ts';
import { createDocsTenant, form, postForm, type DocsTenant } from '../harness/documents.ts';
import { killProcessGroup, startWorkerProcess } from '../harness/process-group.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/** A long text: dozens of chunks of 100 tokens, so that embedding them takes a while. */
const longText = () =>
  Array.from({ length: 200 }, (_, i) => `Section ${i}. The Lisbon office reported turnover item ${i * 7} for the quarter, with remark number ${i} on lease clause ${i % 13}.`).join('\n\n');

describe('document indexing durability on a real Temporal server', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const workers: ChildProcess[] = [];
  let stack: TestStack | undefined;
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.exitCode === null) killProcessGroup(worker);
  });
  afterAll(async () => {
    await stack?.close();
    await sql.end();
  });

  it('completes a document exactly once after its worker is killed while embedding: no duplicate or missing chunk', async () => {
    const team: DocsTenant = await createDocsTenant(sql, 'team', 'docsdurable');
    stack = await startTestStack({ worker: false, devUsers: [...DEV_USERS, team.admin] });
    const token = await stack.token(team.admin.email);
    workers.push(startWorkerProcess(stack));

    const text = Buffer.from(longText());
    const created = await postForm(stack, `${V3}/documents`, token, form([{ filename: 'lisbon.txt', bytes: text }]));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const submitted = await stack.request('POST', '/v4/data/documents/rag-index', { token, body: { documentId: id, chunkSize: 100, chunkOverlap: 20 } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const job = () => stack!.request('GET', `/v4/data/documents/rag-index/${submitted.body.jobId}`, { token });

    await until(job, (r) => r.body.stage === 'embedding', 120_000);
    killProcessGroup(workers[0]!);
    const killedAt = Date.now();
    workers.push(startWorkerProcess(stack));

    // The step is retried once its heartbeat timeout (20 s) has passed.
    const done = await until(job, (r) => r.body.state !== 'queued' && r.body.state !== 'running', 180_000);
    process.stderr.write(`[documents-durability] worker killed while embedding: job completed ${Date.now() - killedAt} ms after the kill\n`);
    const extractor = createExtractor();
    const expected = chunkSegments((await extractor.extract({ bytes: text, filename: 'lisbon.txt' })).segments, { chunkSize: 100, chunkOverlap: 20 });
    await extractor.close();
    expect(expected.length).toBeGreaterThan(50);
    expect(done.body).toMatchObject({ state: 'completed', chunks: expected.length, error: null });
    const record = await stack.request('GET', `${V3}/documents/${id}`, { token });
    expect(record.body).toMatchObject({ status: 'ready', indexed: true, chunkCount: expected.length });

    const rows = await sql<{ chunk_index: number; content: string; embedded: boolean }[]>`
      select chunk_index, content, embedding_model is not null as embedded from search_chunks
      where source_kind = 'document' and source_id = ${id} order by chunk_index`;
    expect(rows.map((r) => r.chunk_index)).toEqual([...expected.keys()]);
    expect(rows.map((r) => r.content)).toEqual(expected.map((c) => c.content));
    const [vectors] = await sql<{ installed: boolean }[]>`select exists (select 1 from pg_extension where extname = 'vector') as installed`;
    if (vectors!.installed) expect(rows.every((r) => r.embedded)).toBe(true);

    // The kill happened mid-step: the embedding step ran again (a later attempt), on the second worker.
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const handle = new Client({ connection, namespace: stack.temporal.namespace }).workflow.getHandle(`document-${id}-index`);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'storeDocumentChunks');
      const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId));
      expect(started?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'storeDocumentChunks')).toHaveLength(1);
    } finally {
      await connection.close();
    }
  }, 360_000);
});
