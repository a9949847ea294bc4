import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { createDocsTenant, fixture, form, postForm, storedObjects, type DocsTenant } from '../harness/documents.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const DOCS = '/v4/data/documents';

/** v4 documents through HTTP: several files per upload, classification, records with their storage path, indexing jobs. */
describe('v4 documents', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let team: DocsTenant;
  let free: DocsTenant;
  let token: string;

  beforeAll(async () => {
    team = await createDocsTenant(sql, 'team', 'docsv4');
    free = await createDocsTenant(sql, 'free', 'docsv4free');
    stack = await startTestStack({ devUsers: [...DEV_USERS, team.admin, free.admin] });
    token = await stack.token(team.admin.email);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const record = (id: string, tenant = team.id, as = team.admin.email) => stack.request('GET', `${DOCS}/records/${id}?tenant_id=${tenant}`, { as });

  it('classifies several files of one form (processing_mode=classification) and keeps each as a record with its storage path', async () => {
    const answer = await postForm(
      stack,
      `${DOCS}/classify`,
      token,
      form([
        ['tenant_id', team.slug],
        ['processing_mode', 'classification'],
        ['tags', 'intake'],
        { name: 'files', filename: 'charter.docx', bytes: await fixture('sample.docx') },
        { name: 'files', filename: 'orders.xlsx', bytes: await fixture('sample.xlsx') },
      ]),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.data).toHaveLength(2);
    const [charter, orders] = answer.body.data;
    expect(orders).toMatchObject({ filename: 'orders.xlsx', status: 'ready', tags: ['intake'], classification: { category: 'spreadsheet' } });
    expect(charter.classification).toMatchObject({ category: expect.any(String), confidence: expect.any(Number) });
    for (const document of answer.body.data) {
      const fetched = await record(document.id);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(document);
      expect(fetched.body).toMatchObject({ storagePath: `tenants/${team.id}/documents/${document.id}/original`, chunkCount: 0, indexed: false });
    }
    expect(await storedObjects(stack, team.id)).toEqual(expect.arrayContaining([`${charter.id}/original`, `${orders.id}/original`]));
  });

  it('uploads several files (processing_mode=full): each is classified and indexed by its job', async () => {
    const answer = await postForm(
      stack,
      `${DOCS}/upload?tenant_id=${team.id}`,
      token,
      form([
        ['processing_mode', 'full'],
        { name: 'files', filename: 'northwind.pdf', bytes: await fixture('sample.pdf') },
        { name: 'files', filename: 'orders.csv', bytes: await fixture('sample.csv') },
      ]),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.data.map((d: any) => [d.filename, d.status])).toEqual([
      ['northwind.pdf', 'uploaded'],
      ['orders.csv', 'uploaded'],
    ]);
    for (const document of answer.body.data) {
      expect(document.jobId).toEqual(expect.any(String));
      const done = await until(() => record(document.id), (r) => r.body.status === 'ready' || r.body.status === 'failed', 120_000);
      expect(done.body).toMatchObject({ status: 'ready', indexed: true, classification: { category: expect.any(String) } });
      expect(done.body.chunkCount).toBeGreaterThan(0);
      const job = await stack.request('GET', `${DOCS}/rag-index/${document.jobId}?tenant_id=${team.id}`, { as: team.admin.email });
      expect(job.body).toMatchObject({ jobId: document.jobId, documentId: document.id, state: 'completed', classify: true, index: true, chunks: done.body.chunkCount, error: null });
    }
    expect((await record(answer.body.data[1].id)).body.classification.category).toBe('spreadsheet');
  }, 240_000);

  it('runs an indexing job (rag-index): 202 with the job, whose state is readable until it completes', async () => {
    const created = await postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([{ name: 'files', filename: 'minutes.doc', bytes: await fixture('sample.doc') }]));
    const id = created.body.data[0].id;
    const submitted = await stack.request('POST', `${DOCS}/rag-index`, { as: team.admin.email, body: { tenant_id: team.id, documentId: id, chunkSize: 200, chunkOverlap: 50 } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    expect(submitted.body).toMatchObject({ documentId: id, workflowId: `document-${id}-index`, state: 'queued', classify: false, index: true, chunkSize: 200, chunkOverlap: 50, chunks: null });
    const job = () => stack.request('GET', `${DOCS}/rag-index/${submitted.body.jobId}?tenant_id=${team.id}`, { as: team.admin.email });
    const done = await until(job, (r) => r.body.state === 'completed' || r.body.state === 'failed', 120_000);
    expect(done.body).toMatchObject({ state: 'completed', stage: null, chunks: 1, error: null });
    expect(done.body.startedAt).toEqual(expect.any(String));
    expect(done.body.completedAt).toEqual(expect.any(String));
    expect((await record(id)).body).toMatchObject({ indexed: true, chunkCount: 1, jobId: submitted.body.jobId, classification: { category: expect.any(String) } });
    expect((await stack.request('GET', `${DOCS}/rag-index/${submitted.body.jobId}`, { token: await stack.token(GLOBEX_ADMIN) })).status).toBe(404);
  }, 240_000);

  it('refuses a form it cannot take, all files or none', async () => {
    const before = await storedObjects(stack, team.id);
    const txt = await fixture('sample.txt');
    const cases: Array<[number, string, Promise<{ status: number; body: any }>]> = [
      [400, 'processing_mode', postForm(stack, `${DOCS}/upload?tenant_id=${team.id}`, token, form([['processing_mode', 'classification'], { name: 'files', filename: 'a.txt', bytes: txt }]))],
      [400, 'processing_mode', postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([['processing_mode', 'full'], { name: 'files', filename: 'a.txt', bytes: txt }]))],
      [400, 'tenant_id', postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([['tenant_id', team.id], { name: 'files', filename: 'a.txt', bytes: txt }]))],
      [400, 'tenant_id', postForm(stack, `${DOCS}/classify`, token, form([{ name: 'files', filename: 'a.txt', bytes: txt }, ['tenant_id', team.id]]))],
      [400, 'files', postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([['tags', 'none']]))],
      [400, 'file', postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([{ name: 'file', filename: 'a.txt', bytes: txt }]))],
      [415, '', postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([{ name: 'files', filename: 'a.txt', bytes: txt }, { name: 'files', filename: 'b.txt', bytes: new Uint8Array([0, 1, 2, 0, 0]) }]))],
    ];
    for (const [status, field, pending] of cases) {
      const answer = await pending;
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(status);
      if (field) expect(answer.body.error.details.field).toBe(field);
    }
    expect(await storedObjects(stack, team.id)).toEqual(before);
  });

  it('refuses, on a plan without OCR, to process an image, keeping none of the form’s files', async () => {
    const freeToken = await stack.token(free.admin.email);
    const answer = await postForm(
      stack,
      `${DOCS}/classify?tenant_id=${free.id}`,
      freeToken,
      form([
        { name: 'files', filename: 'notes.txt', bytes: await fixture('sample.txt') },
        { name: 'files', filename: 'scan.png', bytes: await fixture('ocr.png') },
      ]),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(403);
    expect(answer.body.error.message).toContain('documents.ocr');
    expect(await storedObjects(stack, free.id)).toEqual([]);
    expect((await stack.request('GET', `/api/svc/v3/documents`, { token: freeToken })).body.total).toBe(0);
  });

  it('answers 404 for a record or job the tenant does not have, and 403 for a tenant the caller is not in', async () => {
    const created = await postForm(stack, `${DOCS}/classify?tenant_id=${team.id}`, token, form([{ name: 'files', filename: 'a.txt', bytes: await fixture('sample.txt') }]));
    const id = created.body.data[0].id;
    const other = await stack.token(GLOBEX_ADMIN);
    expect((await stack.request('GET', `${DOCS}/records/${id}`, { token: other })).status).toBe(404);
    expect((await stack.request('GET', `${DOCS}/records/${id}?tenant_id=${team.id}`, { token: other })).status).toBe(403);
    expect((await stack.request('POST', `${DOCS}/rag-index`, { token: other, body: { documentId: id } })).status).toBe(404);
    expect((await stack.request('POST', `${DOCS}/rag-index`, { token: other, body: { documentId: id, tenant_id: team.id } })).status).toBe(403);
    const upload = await postForm(stack, `${DOCS}/upload`, other, form([['tenant_id', team.id], { name: 'files', filename: 'x.txt', bytes: await fixture('sample.txt') }]));
    expect(upload.status).toBe(403);
    expect((await stack.request('GET', `${DOCS}/rag-index/00000000-0000-0000-0000-000000000000?tenant_id=${team.id}`, { token })).status).toBe(404);
    expect((await stack.request('POST', `${DOCS}/rag-index?tenant_id=${team.id}`, { token, body: { documentId: id, chunkSize: 200, chunkOverlap: 150 } })).body.error.details.field).toBe('chunk_overlap');
    expect((await stack.request('POST', `${DOCS}/rag-index?tenant_id=${team.id}`, { token, body: { documentId: id, chunkSize: 50 } })).body.error.details.field).toBe('chunk_size');
    expect((await record(id)).body.status).toBe('ready');
  });
});
