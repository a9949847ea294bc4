import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { nestedXlsx, plainDocx, understatedDocx } from '../../control-plane/extract/fixtures/bombs.ts';
import { createDocsTenant, form, postForm, type DocsTenant } from '../harness/documents.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * Decompression and parser bombs uploaded through v3: each is refused by a limit the reason names,
 * whether it is read by an indexing job or inside a request, and the platform serves the next
 * document, another tenant's, as before.
 */
describe('v3 documents: decompression and parser bombs', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let attacker: DocsTenant;
  let neighbour: DocsTenant;

  beforeAll(async () => {
    attacker = await createDocsTenant(sql, 'team', 'bombs');
    neighbour = await createDocsTenant(sql, 'team', 'neighbour');
    stack = await startTestStack({ devUsers: [...DEV_USERS, attacker.admin, neighbour.admin] });
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

  it('fails the indexing job of a DOCX whose ZIP directory understates its size, naming the limit, and indexes the next tenant’s document', async () => {
    // 300 MiB of paragraphs in about 1 MB, its headers claiming 2 000 bytes.
    const bomb = await upload(attacker, 'charter.docx', understatedDocx(300), [['autoIndex', 'true']]);
    const failed = await settled(attacker, bomb.id);
    expect(failed.body).toMatchObject({ status: 'failed', indexed: false });
    expect(failed.body.failureReason).toMatch(/^file unpacks to more than /);

    // Read inside a request (classification), the same file is a clear 400 on `file`.
    const classified = await stack.request('POST', `${V3}/documents/${bomb.id}/classify`, { as: attacker.admin.email });
    expect(classified.status).toBe(400);
    expect(classified.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: failed.body.failureReason, details: { field: 'file', format: 'docx' } });

    const ordinary = await upload(neighbour, 'minutes.docx', plainDocx(['Minutes of the harbour board', 'The pier reopens in April']), [['autoIndex', 'true']]);
    expect((await settled(neighbour, ordinary.id)).body).toMatchObject({ status: 'ready', indexed: true, failureReason: null });
  }, 300_000);

  it('refuses a deeply nested XLSX read inside a request (400 naming the limit), and classifies the next document', async () => {
    // A cell nested a million elements deep: 7 MB of XML in about 15 KB.
    const bomb = await upload(attacker, 'deep.xlsx', nestedXlsx(1_000_000));
    const classified = await stack.request('POST', `${V3}/documents/${bomb.id}/classify`, { as: attacker.admin.email });
    expect(classified.status, JSON.stringify(classified.body)).toBe(400);
    expect(classified.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'file', format: 'xlsx' } });
    expect(classified.body.error.message).toMatch(/^file unpacks to more than /);

    const ordinary = await upload(neighbour, 'notes.docx', plainDocx(['Budget approved for the Lisbon office']));
    const answer = await stack.request('POST', `${V3}/documents/${ordinary.id}/classify`, { as: neighbour.admin.email });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.category).toEqual(expect.any(String));
  }, 120_000);
});
