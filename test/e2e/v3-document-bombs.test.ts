import { readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { MAX_ZIP_ENTRIES } from '../../control-plane/extract/extractor.ts';
import { crowdedDocx, hugeGif, hugePng, nestedXlsx, plainDocx, understatedDocx, widePageTreePdf } from '../../control-plane/extract/fixtures/bombs.ts';
import { createDocsTenant, form, postForm, type DocsTenant } from '../harness/documents.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * Decompression and parser bombs uploaded through v3: each is refused at upload by a limit the
 * reason names, with nothing stored; a PDF bomb already stored is stopped at the time limit when it
 * is read by an indexing job or inside a request; and the platform serves the next document,
 * another tenant's, as before.
 */
const READ_TIMEOUT_MS = 5_000;
const samplePdf = () => new Uint8Array(readFileSync(new URL('../../control-plane/extract/fixtures/sample.pdf', import.meta.url)));
const ocrPng = () => new Uint8Array(readFileSync(new URL('../../control-plane/extract/fixtures/ocr.png', import.meta.url)));

describe('v3 documents: decompression and parser bombs', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let attacker: DocsTenant;
  let neighbour: DocsTenant;

  beforeAll(async () => {
    attacker = await createDocsTenant(sql, 'team', 'bombs');
    neighbour = await createDocsTenant(sql, 'team', 'neighbour');
    // A short time limit, so that the PDF bomb is stopped in seconds rather than the default minute.
    stack = await startTestStack({ devUsers: [...DEV_USERS, attacker.admin, neighbour.admin], extractionLimits: { timeoutMs: READ_TIMEOUT_MS } });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const upload = async (who: DocsTenant, filename: string, bytes: Uint8Array, fields: Array<[string, string]> = []) => {
    const created = await postForm(stack, `${V3}/documents`, await stack.token(who.admin.email), form([{ filename, bytes }, ...fields]));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { id: string };
  };
  const settled = (who: DocsTenant, id: string) =>
    until(
      () => stack.request('GET', `${V3}/documents/${id}`, { as: who.admin.email }),
      (r) => r.body.status === 'ready' || r.body.status === 'failed',
      180_000,
    );

  /** What the tenant keeps: its files in the blob store, its document rows, its counted bytes. */
  const kept = async (who: DocsTenant) => ({
    files: (await readdir(join(stack.blobRoot, 'tenants', who.id), { recursive: true, withFileTypes: true }).catch(() => []))
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .sort(),
    documents: (await sql<[{ count: number }]>`select count(*)::int as count from documents where tenant_id = ${who.id}::uuid`)[0].count,
    bytes: (await sql<{ bytes: string }[]>`select bytes::text as bytes from tenant_storage_usage where tenant_id = ${who.id}::uuid`)[0]?.bytes ?? '0',
  });
  /** Uploads a bomb and expects it refused at upload: 400 on `file` naming the limit, with nothing kept. */
  const refusedAtUpload = async (filename: string, bytes: Uint8Array, format: 'docx' | 'xlsx' | 'pdf' | 'image', fields: Array<[string, string]> = []) => {
    const before = await kept(attacker);
    const refused = await postForm(stack, `${V3}/documents`, await stack.token(attacker.admin.email), form([{ filename, bytes }, ...fields]));
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'file', format, limit: expect.any(Number) } });
    expect(await kept(attacker)).toEqual(before);
    return refused.body.error as { code: string; message: string; details: { issue: string } };
  };

  it('refuses at upload a DOCX whose ZIP directory understates its size, naming the limit and storing nothing, and indexes the next tenant’s document', async () => {
    // 300 MiB of paragraphs in about 1 MB, its headers claiming 2 000 bytes.
    const error = await refusedAtUpload('charter.docx', understatedDocx(300), 'docx', [['autoIndex', 'true']]);
    expect(error.message).toMatch(/^file unpacks to more than /);

    const ordinary = await upload(neighbour, 'minutes.docx', plainDocx(['Minutes of the harbour board', 'The pier reopens in April']), [['autoIndex', 'true']]);
    expect((await settled(neighbour, ordinary.id)).body).toMatchObject({ status: 'ready', indexed: true, failureReason: null });
  }, 300_000);

  it('refuses at upload a deeply nested XLSX and a DOCX of too many files (400 naming the limit, nothing stored), and classifies the next document', async () => {
    // A cell nested a million elements deep: 7 MB of XML in about 15 KB.
    const nested = await refusedAtUpload('deep.xlsx', nestedXlsx(1_000_000), 'xlsx');
    expect(nested.message).toMatch(/^file unpacks to more than /);
    // Counted from the central directory before anything is inflated.
    const crowded = await refusedAtUpload('crowded.docx', crowdedDocx(MAX_ZIP_ENTRIES + 1), 'docx');
    expect(crowded).toMatchObject({ message: `file holds more than ${MAX_ZIP_ENTRIES} files`, details: { limit: MAX_ZIP_ENTRIES } });

    const ordinary = await upload(neighbour, 'notes.docx', plainDocx(['Budget approved for the Lisbon office']));
    const answer = await stack.request('POST', `${V3}/documents/${ordinary.id}/classify`, { as: neighbour.admin.email });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.category).toEqual(expect.any(String));
  }, 120_000);

  it('refuses at upload a PNG and a GIF whose headers declare 50000 x 50000 pixels, quickly, before anything decodes them, and takes an ordinary image', async () => {
    for (const [filename, bytes] of [['scan.png', hugePng(50_000, 50_000)], ['scan.gif', hugeGif(50_000, 50_000)]] as const) {
      const started = Date.now();
      const error = await refusedAtUpload(filename, bytes, 'image', [['autoIndex', 'true']]);
      expect(error.message).toBe('file has more than 50000000 pixels (50000 x 50000)');
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    expect(await upload(attacker, 'invoice.png', ocrPng())).toMatchObject({ id: expect.any(String) });
  }, 120_000);

  it('refuses at upload a PDF whose page tree keeps the reader busy past the time limit (400 naming it, nothing stored), and indexes the next PDF', async () => {
    // One page listed 200 000 times: each page opened walks the whole list, for minutes.
    const error = await refusedAtUpload('pages.pdf', widePageTreePdf(200_000), 'pdf', [['autoIndex', 'true']]);
    expect(error).toEqual({
      code: 'VALIDATION_ERROR',
      message: `file took longer than ${READ_TIMEOUT_MS / 1000} s to read`,
      details: { field: 'file', issue: `took longer than ${READ_TIMEOUT_MS / 1000} s to read`, format: 'pdf', limit: READ_TIMEOUT_MS },
    });

    const ordinary = await upload(neighbour, 'report.pdf', samplePdf(), [['autoIndex', 'true']]);
    expect((await settled(neighbour, ordinary.id)).body).toMatchObject({ status: 'ready', indexed: true, failureReason: null });
  }, 240_000);

  it('stops a stored PDF whose page tree keeps the reader busy at the time limit, in its indexing job and inside a request, and reads the next PDF', async () => {
    // A file kept before uploads were checked: an ordinary PDF whose stored bytes are then the bomb's.
    const bomb = await upload(attacker, 'pages.pdf', samplePdf());
    const [stored] = (await kept(attacker)).files.filter((file) => file.endsWith(join(bomb.id, 'original')));
    await writeFile(stored!, widePageTreePdf(200_000));
    const indexing = await stack.request('POST', `${V3}/documents/${bomb.id}/index`, { as: attacker.admin.email, body: {} });
    expect([200, 202], JSON.stringify(indexing.body)).toContain(indexing.status);
    const failed = await settled(attacker, bomb.id);
    expect(failed.body).toMatchObject({ status: 'failed', indexed: false, failureReason: `file took longer than ${READ_TIMEOUT_MS / 1000} s to read` });

    const classified = await stack.request('POST', `${V3}/documents/${bomb.id}/classify`, { as: attacker.admin.email });
    expect(classified.status, JSON.stringify(classified.body)).toBe(400);
    expect(classified.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: failed.body.failureReason,
      details: { field: 'file', issue: `took longer than ${READ_TIMEOUT_MS / 1000} s to read`, format: 'pdf', limit: READ_TIMEOUT_MS },
    });

    const ordinary = await upload(neighbour, 'report.pdf', samplePdf(), [['autoIndex', 'true']]);
    expect((await settled(neighbour, ordinary.id)).body).toMatchObject({ status: 'ready', indexed: true, failureReason: null });
    const answer = await stack.request('POST', `${V3}/documents/${ordinary.id}/classify`, { as: neighbour.admin.email });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }, 240_000);
});
