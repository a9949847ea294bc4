import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { createDocsTenant, fixture, form, PDF_FORM_START, postForm, postOversizedForm, storedObjects, type DocsTenant } from '../harness/documents.ts';
import { GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const MB = 1024 * 1024;

/** Seed 000's upload types, one real file of each (control-plane/extract/fixtures), with the media type judged from content. */
const FIXTURES: Array<[string, string]> = [
  ['sample.pdf', 'application/pdf'],
  ['sample.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['sample.doc', 'application/msword'],
  ['sample.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ['sample.xls', 'application/vnd.ms-excel'],
  ['sample.csv', 'text/csv'],
  ['sample.rtf', 'application/rtf'],
  ['sample.txt', 'text/plain'],
  ['ocr.png', 'image/png'],
];

/** v3 documents through HTTP: streamed uploads judged by content, limits, the record, download, classification, listing, deletion, isolation. */
describe('v3 documents', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let team: DocsTenant;
  let token: string;

  beforeAll(async () => {
    team = await createDocsTenant(sql, 'team');
    stack = await startTestStack({ devUsers: [...DEV_USERS, team.admin, team.member] });
    token = await stack.token(team.admin.email);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const upload = (entries: Parameters<typeof form>[0], as = token, headers: Record<string, string> = {}) => postForm(stack, `${V3}/documents`, as, form(entries), headers);
  const get = (id: string, as = team.admin.email) => stack.request('GET', `${V3}/documents/${id}`, { as });

  it('stores each supported format, judged by its content, and downloads it with the caller’s credentials', async () => {
    for (const [name, contentType] of FIXTURES) {
      const bytes = await fixture(name);
      // Named without an extension for binary formats: the content decides, not the name.
      const filename = contentType.startsWith('text/') ? name : name.replace(/\.\w+$/, '');
      const created = await upload([{ filename, bytes }, ['type', 'report'], ['tags', 'q3, finance'], ['metadata', '{"department":"ops","priority":2}']]);
      expect(created.status, `${name}: ${JSON.stringify(created.body)}`).toBe(201);
      expect(created.body).toMatchObject({
        filename,
        type: 'report',
        contentType,
        size: bytes.length,
        status: 'uploaded',
        tags: ['q3', 'finance'],
        indexed: false,
        classification: null,
        metadata: { department: 'ops', priority: 2 },
        url: `${V3}/documents/${created.body.id}/file`,
      });
      expect(created.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const file = await fetch(stack.url + created.body.url, { headers: { authorization: `Bearer ${token}` } });
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe(contentType);
      const downloaded = new Uint8Array(await file.arrayBuffer());
      expect(sha256(downloaded)).toBe(sha256(bytes));
      expect((await fetch(stack.url + created.body.url)).status).toBe(401);
    }
  });

  it('takes the form’s fields in any order, after the file too, and defaults the type', async () => {
    const bytes = await fixture('sample.txt');
    const created = await upload([{ filename: 'notes.txt', bytes }, ['tags', 'late'], ['autoClassify', 'false']]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ type: 'general', tags: ['late'], metadata: {} });
    expect((await get(created.body.id)).body).toEqual(created.body);
  });

  it('refuses a type outside the supported list by its content (415), whatever the name, and stores nothing', async () => {
    const before = await storedObjects(stack, team.id);
    const refusals: Array<[string, Uint8Array, string]> = [
      ['archive.pdf', gzipSync(Buffer.from('not a pdf')), 'application/gzip'],
      ['program.txt', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(600)]), 'application/x-elf'],
      ['picture.png', Buffer.concat([Buffer.from('BM'), Buffer.alloc(4), Buffer.from([0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0]), Buffer.alloc(200)]), 'image/bmp'],
      ['data.csv', Buffer.concat([Buffer.from('a,b\n'), Buffer.alloc(64, 0), Buffer.from('1,2\n')]), 'application/octet-stream'],
    ];
    for (const [filename, bytes, judged] of refusals) {
      const refused = await upload([{ filename, bytes, type: 'application/pdf' }]);
      expect(refused.status, `${filename}: ${JSON.stringify(refused.body)}`).toBe(415);
      expect(refused.body.error).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE', details: { contentType: judged } });
      expect(refused.body.error.details.accepted).toContain('image/gif');
    }
    expect(await storedObjects(stack, team.id)).toEqual(before);
  });

  it('refuses a file over the limit: a declared length before reading (413), a chunked body cut at the limit; nothing is left', async () => {
    const before = await storedObjects(stack, team.id);
    // Declared: 102 MiB (below Bun's own 128 MiB cut), of which only the head is sent; the answer comes without the rest.
    const declared = await postOversizedForm(stack, `${V3}/documents`, token, 102 * MB);
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { limit: 100 * MB } });

    // Chunked: 101 MB streamed without a length; the upload stops at the limit.
    const { boundary, head } = PDF_FORM_START;
    let sent = 0;
    const chunk = Buffer.alloc(MB, 0x20);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        if (sent >= 101 * MB) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const chunked = await fetch(`${stack.url}${V3}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(chunked.status, JSON.stringify(chunked.body)).toBe(413);
    expect(chunked.body.error.code).toBe('FILE_TOO_LARGE');
    await until(() => storedObjects(stack, team.id), (objects) => JSON.stringify(objects) === JSON.stringify(before), 10_000);
  }, 120_000);

  it('answers 400 naming the field for a form it cannot take, and stores nothing', async () => {
    const before = await storedObjects(stack, team.id);
    const txt = await fixture('sample.txt');
    const cases: Array<[string, Promise<{ status: number; body: any }>]> = [
      ['file', upload([['type', 'report']])],
      ['metadata', upload([{ filename: 'a.txt', bytes: txt }, ['metadata', '{not json']])],
      ['metadata', upload([{ filename: 'a.txt', bytes: txt }, ['metadata', '[1,2]']])],
      ['autoIndex', upload([{ filename: 'a.txt', bytes: txt }, ['autoIndex', 'maybe']])],
      ['colour', upload([['colour', 'red'], { filename: 'a.txt', bytes: txt }])],
      ['file', upload([{ filename: 'a.txt', bytes: txt }, { filename: 'b.txt', bytes: txt }])],
      ['file', upload([{ filename: 'empty.txt', bytes: new Uint8Array() }])],
      ['tags', upload([{ filename: 'a.txt', bytes: txt }, ['tags', Array.from({ length: 21 }, (_, i) => `t${i}`).join(',')]])],
      ['(body)', stack.request('POST', `${V3}/documents`, { token, body: { file: 'x' } })],
    ];
    for (const [field, pending] of cases) {
      const answer = await pending;
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_ERROR');
      expect(answer.body.error.details.field).toMatch(new RegExp(`^${field.replace(/[()]/g, '\\$&')}`));
    }
    expect(await storedObjects(stack, team.id)).toEqual(before);
  });

  it('lists with filters, total and hasMore, newest first', async () => {
    const tag = `list-${Date.now()}`;
    const ids: string[] = [];
    for (const type of ['invoice', 'invoice', 'memo']) {
      const created = await upload([{ filename: `${type}.txt`, bytes: await fixture('sample.txt') }, ['type', type], ['tags', `${tag},${type}`]]);
      ids.push(created.body.id);
    }
    const list = (query: string) => stack.request('GET', `${V3}/documents?${query}`, { as: team.admin.email });
    const all = await list(`tags=${tag}`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 3, hasMore: false });
    expect(all.body.data.map((d: any) => d.id)).toEqual([...ids].reverse());
    const invoices = await list(`tags=${tag},invoice&type=invoice&status=uploaded&indexed=false&limit=1`);
    expect(invoices.body).toMatchObject({ total: 2, hasMore: true });
    expect(invoices.body.data.map((d: any) => d.id)).toEqual([ids[1]]);
    const second = await list(`tags=${tag}&type=invoice&limit=1&offset=1`);
    expect(second.body).toMatchObject({ total: 2, hasMore: false });
    expect(second.body.data.map((d: any) => d.id)).toEqual([ids[0]]);
    expect((await list(`tags=${tag}&indexed=true`)).body.total).toBe(0);
    for (const bad of ['limit=101', 'limit=0', 'status=lost', 'indexed=yes', 'offset=-1']) {
      const refused = await list(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.details.field).toBe(bad.split('=')[0]);
    }
  });

  it('classifies a document on request and keeps the classification on the record', async () => {
    const created = await upload([{ filename: 'minutes.docx', bytes: await fixture('sample.docx') }]);
    const classified = await stack.request('POST', `${V3}/documents/${created.body.id}/classify`, { as: team.admin.email });
    expect(classified.status, JSON.stringify(classified.body)).toBe(200);
    expect(classified.body).toEqual({ category: expect.any(String), subcategory: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'), confidence: expect.any(Number), extractedData: expect.any(Object) });
    expect(classified.body.confidence).toBeGreaterThanOrEqual(0);
    expect(classified.body.confidence).toBeLessThanOrEqual(1);
    const record = (await get(created.body.id)).body;
    expect(record).toMatchObject({ status: 'ready', classification: classified.body });
  });

  it('classifies on upload with autoClassify, in a workflow that ends the document ready', async () => {
    const created = await upload([{ filename: 'letter.rtf', bytes: await fixture('sample.rtf') }, ['autoClassify', 'true']]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe('uploaded');
    const done = await until(() => get(created.body.id), (r) => r.body.status === 'ready' || r.body.status === 'failed', 60_000);
    expect(done.body).toMatchObject({ status: 'ready', failureReason: null, indexed: false, classification: { category: expect.any(String) } });
  });

  const search = (body: Record<string, unknown>, as = team.admin.email) => stack.request('POST', `${V3}/documents/search`, { as, body });
  const chunkRows = (id: string) => sql<{ chunk_index: number; metadata: any }[]>`select chunk_index, metadata from search_chunks where source_kind = 'document' and source_id = ${id} order by chunk_index`;
  const waitForJob = (id: string) => until(() => get(id), (r) => r.body.status === 'ready' || r.body.status === 'failed', 120_000);

  it('indexes on upload with autoIndex, in a workflow carrying the tenant, and finds the text with its page', async () => {
    const created = await upload([{ filename: 'northwind.pdf', bytes: await fixture('sample.pdf') }, ['type', 'report'], ['autoIndex', 'true'], ['autoClassify', 'true']]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const done = await waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'ready', indexed: true, failureReason: null, classification: { category: expect.any(String) } });
    expect(done.body.chunkCount).toBeGreaterThanOrEqual(2);
    expect((await chunkRows(created.body.id)).map((r) => r.chunk_index)).toEqual([...Array(done.body.chunkCount).keys()]);

    const found = await search({ query: 'turnover figures appendix', limit: 5 });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const hit = found.body.results.find((r: any) => r.documentId === created.body.id && r.chunk.includes('Appendix'));
    expect(hit).toMatchObject({ filename: 'northwind.pdf', metadata: { pageNumber: 2 } });
    expect(hit.score).toBeGreaterThan(0);
    expect(hit.score).toBeLessThanOrEqual(1);
    const viaGet = await stack.request('GET', `${V3}/documents/search?query=${encodeURIComponent('turnover figures appendix')}&limit=5&type=report`, { as: team.admin.email });
    expect(viaGet.body.results.map((r: any) => r.documentId)).toContain(created.body.id);
    const otherType = await search({ query: 'turnover figures appendix', type: 'invoice' });
    expect(otherType.body.results.map((r: any) => r.documentId)).not.toContain(created.body.id);
    const strict = await search({ query: 'turnover figures appendix', minScore: 0.5 });
    for (const result of strict.body.results) expect(result.score).toBeGreaterThanOrEqual(0.5);
    for (const [field, body] of [['query', { query: '' }], ['minScore', { query: 'x', minScore: 2 }], ['limit', { query: 'x', limit: 101 }], ['colour', { query: 'x', colour: 1 }]] as const) {
      const refused = await search(body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe(field);
    }

    const { Connection, Client } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      const described = await client.workflow.getHandle(`document-${created.body.id}-index`).describe();
      expect(described.status.name).toBe('COMPLETED');
      expect(described.searchAttributes).toMatchObject({ TenantId: [team.id], WorkflowKey: ['document-index'] });
    } finally {
      await connection.close();
    }
  }, 180_000);

  it('re-indexes with other chunk sizes, replacing the chunks', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} of the Zurich lease renewal notes: the landlord asks for clause ${i} to be reviewed.`).join('\n\n');
    const created = await upload([{ filename: 'lease.txt', bytes: Buffer.from(paragraphs) }]);
    const index = (body: unknown) => stack.request('POST', `${V3}/documents/${created.body.id}/index`, { as: team.admin.email, body });
    /** The job's outcome: answered at once when it ended within the wait (200), else read from the job (202). */
    const indexed = async (body: unknown) => {
      const answer = await index(body);
      expect([200, 202], JSON.stringify(answer.body)).toContain(answer.status);
      if (answer.status === 200) return answer.body;
      expect(answer.body).toMatchObject({ status: 'processing', chunks: 0 });
      const job = await until(() => stack.request('GET', `/v4/data/documents/rag-index/${answer.body.jobId}`, { as: team.admin.email }), (r) => r.body.state === 'completed', 120_000);
      return { documentId: job.body.documentId, chunks: job.body.chunks, status: 'indexed', jobId: job.body.jobId };
    };
    const coarse = await indexed({ chunkSize: 4000 });
    expect(coarse).toMatchObject({ documentId: created.body.id, status: 'indexed', chunks: 1 });
    const fine = await indexed({ chunkSize: 100, chunkOverlap: 20 });
    expect(fine.status).toBe('indexed');
    expect(fine.chunks).toBeGreaterThan(5);
    const rows = await chunkRows(created.body.id);
    expect(rows.map((r) => r.chunk_index)).toEqual([...Array(fine.chunks).keys()]);
    expect(rows[0]!.metadata).toMatchObject({ paragraph: 1 });
    expect((await get(created.body.id)).body).toMatchObject({ indexed: true, chunkCount: fine.chunks, status: 'ready' });
    for (const [field, body] of [['chunkSize', { chunkSize: 99 }], ['chunkSize', { chunkSize: 4001 }], ['chunkOverlap', { chunkSize: 200, chunkOverlap: 101 }], ['chunkOverlap', { chunkOverlap: -1 }], ['id', { id: 'x' }]] as const) {
      const refused = await index(body);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.details.field).toBe(field);
    }
    // Delete takes the chunks with it.
    expect((await stack.request('DELETE', `${V3}/documents/${created.body.id}`, { as: team.admin.email })).status).toBe(204);
    expect(await chunkRows(created.body.id)).toEqual([]);
    const after = await search({ query: 'Zurich lease renewal landlord clause', limit: 100 });
    expect(after.body.results.map((r: any) => r.documentId)).not.toContain(created.body.id);
  }, 180_000);

  it('starts a new job once the document’s previous run has ended, even when that run outlives its closed job', async () => {
    const created = await upload([{ filename: 'handover.txt', bytes: Buffer.from('Handover notes for the Basel warehouse: keys, alarms and the night shift.') }]);
    const { Connection, Client } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      // A run under the document's workflow id that no worker takes: it stays open until terminated,
      // as a finished job's run does for a moment after closing its job.
      const lingering = await client.workflow.start('indexDocument', { taskQueue: 'no-worker-polls-this', workflowId: `document-${created.body.id}-index`, args: [{}] });
      const ended = new Promise((resolve) => setTimeout(resolve, 1500)).then(() => lingering.terminate('the previous run ends'));
      const answer = await stack.request('POST', `${V3}/documents/${created.body.id}/index`, { as: team.admin.email, body: {} });
      await ended;
      expect([200, 202], JSON.stringify(answer.body)).toContain(answer.status);
      const job = await until(
        () => stack.request('GET', `/v4/data/documents/rag-index/${answer.body.jobId}`, { as: team.admin.email }),
        (r) => r.body.state === 'completed' || r.body.state === 'failed',
        120_000,
      );
      expect(job.body).toMatchObject({ state: 'completed', chunks: 1 });
      expect((await get(created.body.id)).body).toMatchObject({ status: 'ready', indexed: true, chunkCount: 1 });
    } finally {
      await connection.close();
    }
  }, 180_000);

  it('reads an image by OCR when the plan has it, and finds its text', async () => {
    const created = await upload([{ filename: 'scan.png', bytes: await fixture('ocr.png') }, ['autoIndex', 'true']]);
    const done = await waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'ready', indexed: true, chunkCount: 1 });
    const found = await search({ query: 'invoice 4711 total', limit: 10 });
    expect(found.body.results.find((r: any) => r.documentId === created.body.id)).toMatchObject({ filename: 'scan.png', metadata: { pageNumber: 1 } });
    expect((await search({ query: 'invoice 4711 total' }, GLOBEX_ADMIN)).body.results.map((r: any) => r.documentId)).not.toContain(created.body.id);
  }, 180_000);

  it("reads a GIF's first frame by OCR like the other images, and finds its text on page 1", async () => {
    const created = await upload([{ filename: 'scan.gif', bytes: await fixture('ocr.gif') }, ['autoIndex', 'true']]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const done = await waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'ready', indexed: true, chunkCount: 1 });
    const found = await search({ query: 'invoice 4711 total', limit: 10 });
    expect(found.body.results.find((r: any) => r.documentId === created.body.id)).toMatchObject({ filename: 'scan.gif', metadata: { pageNumber: 1 } });
  }, 180_000);

  it('ends a job failed, with the reason, for a file that cannot be read', async () => {
    const damaged = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x41)]);
    const created = await upload([{ filename: 'damaged.pdf', bytes: damaged }, ['autoIndex', 'true']]);
    expect(created.status).toBe(201);
    const done = await waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'failed', indexed: false, failureReason: expect.stringContaining('PDF') });
    const again = await stack.request('POST', `${V3}/documents/${created.body.id}/index`, { as: team.admin.email, body: {} });
    // Answered when the job ended within the wait (200), else while it runs (202).
    expect(again.body.status).toBe(again.status === 200 ? 'failed' : 'processing');
    if (again.status === 200) expect(again.body).toMatchObject({ chunks: 0, error: expect.stringContaining('PDF') });
    const job = await until(
      () => stack.request('GET', `/v4/data/documents/rag-index/${again.body.jobId}`, { as: team.admin.email }),
      (r) => r.body.state === 'failed' || r.body.state === 'completed',
      120_000,
    );
    expect(job.body).toMatchObject({ state: 'failed', error: expect.stringContaining('PDF') });
    expect((await get(created.body.id)).body).toMatchObject({ status: 'failed', failureReason: job.body.error });
  }, 180_000);

  it('deletes a document with its file (204); it is gone afterwards', async () => {
    const created = await upload([{ filename: 'gone.pdf', bytes: await fixture('sample.pdf') }]);
    const objects = await storedObjects(stack, team.id);
    expect(objects).toContain(`${created.body.id}/original`);
    const removed = await stack.request('DELETE', `${V3}/documents/${created.body.id}`, { as: team.admin.email });
    expect(removed.status).toBe(204);
    expect(removed.body).toBeUndefined();
    expect((await get(created.body.id)).status).toBe(404);
    expect((await stack.request('DELETE', `${V3}/documents/${created.body.id}`, { as: team.admin.email })).status).toBe(404);
    expect((await storedObjects(stack, team.id)).filter((key) => key.startsWith(created.body.id))).toEqual([]);
  });

  it('keeps each tenant’s documents to itself on every route', async () => {
    const created = await upload([{ filename: 'secret.txt', bytes: await fixture('sample.txt') }, ['tags', 'secret']]);
    const id = created.body.id;
    const other = await stack.token(GLOBEX_ADMIN);
    const attempts = [
      await stack.request('GET', `${V3}/documents/${id}`, { token: other }),
      await stack.request('GET', `${V3}/documents/${id}/file`, { token: other, conformance: false }),
      await stack.request('POST', `${V3}/documents/${id}/classify`, { token: other }),
      await stack.request('POST', `${V3}/documents/${id}/index`, { token: other, body: {} }),
      await stack.request('DELETE', `${V3}/documents/${id}`, { token: other }),
    ];
    for (const attempt of attempts) expect(attempt.status, JSON.stringify(attempt.body)).toBe(404);
    const listed = await stack.request('GET', `${V3}/documents?tags=secret`, { token: other });
    expect(listed.body.total).toBe(0);
    const named = await stack.request('GET', `${V3}/documents/${id}`, { token: other, headers: { 'x-tenant-id': team.slug } });
    expect(named.status).toBe(403);
    const planted = await upload([{ filename: 'planted.txt', bytes: await fixture('sample.txt') }], other, { 'x-tenant-id': team.slug });
    expect(planted.status).toBe(403);
    expect((await get(id)).body).toEqual(created.body);
  });
});

describe('v3 document upload limits', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let free: DocsTenant;

  beforeAll(async () => {
    free = await createDocsTenant(sql, 'free', 'docsfree');
    stack = await startTestStack({ devUsers: [...DEV_USERS, free.admin], rateLimits: { policies: { uploads: { points: 3, durationSeconds: 60 } } } });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it('counts uploads per tenant on their own budget (429 with retryAfter) and applies the plan’s size limit and OCR capability', async () => {
    const token = await stack.token(free.admin.email);
    const png = await fixture('ocr.png');
    const answers = [];
    // The free plan: 10 MB files, no OCR (an image cannot be classified or indexed).
    answers.push(await postOversizedForm(stack, `${V3}/documents`, token, 11 * MB + 1024));
    answers.push(await postForm(stack, `${V3}/documents`, token, form([{ filename: 'scan.png', bytes: png }, ['autoClassify', 'true']])));
    answers.push(await postForm(stack, `${V3}/documents`, token, form([{ filename: 'scan.png', bytes: png }])));
    answers.push(await postForm(stack, `${V3}/documents`, token, form([{ filename: 'scan.png', bytes: png }])));
    expect(answers.map((a) => a.status)).toEqual([413, 403, 201, 429]);
    expect(answers[0]!.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { limit: 10 * MB } });
    expect(answers[1]!.body.error.message).toContain('documents.ocr');
    expect(answers[3]!.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(answers[3]!.body.error.retryAfter).toBeGreaterThan(0);
    expect(answers.map((a) => a.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
    const classify = await stack.request('POST', `${V3}/documents/${answers[2]!.body.id}/classify`, { token });
    expect(classify.status).toBe(403);
    // Other APIs keep their own budget.
    expect((await stack.request('GET', `${V3}/documents`, { token })).status).toBe(200);
    expect(await storedObjects(stack, free.id)).toEqual([`${answers[2]!.body.id}/original`]);
  });
});
