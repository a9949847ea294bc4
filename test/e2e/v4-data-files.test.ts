import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';

const DATA = '/v4/data/resources';

/** A small but real PDF (file-type knows it by its `%PDF-` header), padded to `size` bytes. */
function pdf(size = 300): Buffer {
  const head = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 0x20)]);
}

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** v4 file properties: streamed uploads judged by content and declared limits, downloads, removal. */
describe('v4 resource file properties', () => {
  let stack: TestStack;
  let acme: string;
  let type: any;
  let token: string;
  const run = `R${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    stack = await startTestStack();
    token = await stack.token(ADMIN);
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    const created = await stack.request('POST', `${DATA}/object-types`, {
      as: ADMIN,
      body: {
        name: `Claim${run}`,
        schema: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: false },
        fileProperties: { scan: { maxSize: 2048, contentTypes: ['application/pdf', 'image/*'] }, notes: { maxSize: 100, contentTypes: ['text/plain'] } },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    type = created.body;
  });
  afterAll(() => stack?.close());

  const upload = (id: string, property: string, bytes: Uint8Array, filename: string, as = token) =>
    fetch(`${stack.url}${DATA}/${acme}/${type.key}/${id}/files/${property}?filename=${encodeURIComponent(filename)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

  const download = (id: string, property: string, as = token) =>
    fetch(`${stack.url}${DATA}/${acme}/${type.key}/${id}/files/${property}`, { headers: { authorization: `Bearer ${as}` } });

  const createClaim = async () => (await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { title: 'claim' } } })).body;

  /** The objects stored for a property of a resource. */
  const storedObjects = (id: string, property: string) => readdir(join(stack.blobRoot, 'tenants', acme, 'files', id, property)).catch(() => [] as string[]);

  it('stores an upload, records it in the data with a new version, and streams it back', async () => {
    const claim = await createClaim();
    const bytes = pdf();
    const uploaded = await upload(claim.id, 'scan', bytes, 'scan.pdf');
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body).toMatchObject({ id: claim.id, version: 2 });
    expect(uploaded.body.data.scan).toEqual({
      filename: 'scan.pdf',
      size: bytes.length,
      contentType: 'application/pdf',
      sha256: sha256(bytes),
      uploadedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      fileId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const response = await download(claim.id, 'scan');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="scan.pdf"; filename*=UTF-8''scan.pdf`);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    expect(await storedObjects(claim.id, 'scan')).toHaveLength(1);
  });

  it('replaces a file, keeping only the new object, and names a file of any name in Content-Disposition', async () => {
    const claim = await createClaim();
    await upload(claim.id, 'scan', pdf(), 'first.pdf');
    const replaced = await upload(claim.id, 'scan', PNG, 'Schadensmeldung – Foto.png');
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.scan).toMatchObject({ contentType: 'image/png', size: PNG.length, filename: 'Schadensmeldung – Foto.png' });
    expect(replaced.body.version).toBe(3);
    expect(await storedObjects(claim.id, 'scan')).toEqual([replaced.body.data.scan.fileId]);
    const response = await download(claim.id, 'scan');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Schadensmeldung _ Foto.png"; filename*=UTF-8''${encodeURIComponent('Schadensmeldung – Foto.png')}`,
    );
    expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('refuses a file over the declared size (413) or of an undeclared type (415), leaving the resource and the store as they were', async () => {
    const claim = await createClaim();
    const tooLarge = await upload(claim.id, 'scan', pdf(4096), 'big.pdf');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe('FILE_TOO_LARGE');
    const wrongType = await upload(claim.id, 'scan', Buffer.from('just text'), 'scan.pdf');
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.error).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE', details: { contentType: 'application/octet-stream' } });
    const textAsNotes = await upload(claim.id, 'notes', Buffer.from('hello'), 'notes.txt');
    expect(textAsNotes.status).toBe(200);
    expect(textAsNotes.body.data.notes).toMatchObject({ contentType: 'text/plain', size: 5 });
    expect(textAsNotes.body.version).toBe(2);
    expect(await storedObjects(claim.id, 'scan')).toEqual([]);
  });

  it('answers 404 for an undeclared property, an unknown resource, and a property holding no file', async () => {
    const claim = await createClaim();
    expect((await upload(claim.id, 'photo', PNG, 'x.png')).status).toBe(404);
    expect((await upload('00000000-0000-0000-0000-000000000000', 'scan', PNG, 'x.png')).status).toBe(404);
    expect((await download(claim.id, 'scan')).status).toBe(404);
    expect((await stack.request('DELETE', `${DATA}/${acme}/${type.key}/${claim.id}/files/scan`, { as: ADMIN })).status).toBe(404);
    const noName = await fetch(`${stack.url}${DATA}/${acme}/${type.key}/${claim.id}/files/scan`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: PNG });
    expect(noName.status).toBe(400);
    expect(((await noName.json()) as any).error.details.field).toBe('filename');
  });

  it('keeps file properties out of what clients write: a PUT neither changes nor removes them', async () => {
    const claim = await createClaim();
    const stored = (await upload(claim.id, 'scan', pdf(), 'scan.pdf')).body;
    const forged = await stack.request('PUT', `${DATA}/${acme}/${type.key}/${claim.id}`, {
      as: ADMIN,
      body: { data: { title: 'renamed', scan: { filename: 'evil.pdf', fileId: 'x' } }, version: stored.version },
    });
    expect(forged.status, JSON.stringify(forged.body)).toBe(200);
    expect(forged.body.data).toEqual({ title: 'renamed', scan: stored.data.scan });
    const dropped = await stack.request('PUT', `${DATA}/${acme}/${type.key}/${claim.id}`, { as: ADMIN, body: { data: { title: 'again' }, version: forged.body.version } });
    expect(dropped.body.data.scan).toEqual(stored.data.scan);
  });

  it('changes the schema of a type whose resources hold files, judging their data without the files', async () => {
    const claim = await createClaim();
    await upload(claim.id, 'scan', pdf(), 'scan.pdf');
    const wider = { ...type.schema, properties: { ...type.schema.properties, note: { type: 'string' } } };
    const patched = await stack.request('PATCH', `${DATA}/object-types/${type.objectTypeId}`, { as: ADMIN, body: { schema: wider } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    type = patched.body;
  });

  it('deletes the file and its description', async () => {
    const claim = await createClaim();
    await upload(claim.id, 'scan', pdf(), 'scan.pdf');
    expect((await stack.request('DELETE', `${DATA}/${acme}/${type.key}/${claim.id}/files/scan`, { as: ADMIN })).status).toBe(204);
    const after = (await stack.request('GET', `${DATA}/${acme}/${type.key}/${claim.id}`, { as: ADMIN })).body;
    expect(after.data).toEqual({ title: 'claim' });
    expect(after.version).toBe(3);
    expect(await storedObjects(claim.id, 'scan')).toEqual([]);
    expect((await download(claim.id, 'scan')).status).toBe(404);
  });

  it('removes the files of a deleted resource, alone or in a batch', async () => {
    const alone = await createClaim();
    await upload(alone.id, 'scan', pdf(), 'scan.pdf');
    await upload(alone.id, 'notes', Buffer.from('hello'), 'notes.txt');
    expect(await storedObjects(alone.id, 'scan')).toHaveLength(1);
    expect((await stack.request('DELETE', `${DATA}/${acme}/${type.key}/${alone.id}`, { as: ADMIN })).status).toBe(204);
    expect(await storedObjects(alone.id, 'scan')).toEqual([]);
    expect(await storedObjects(alone.id, 'notes')).toEqual([]);

    const [first, second] = [await createClaim(), await createClaim()];
    await upload(first.id, 'scan', pdf(), 'scan.pdf');
    await upload(second.id, 'scan', pdf(), 'scan.pdf');
    const batch = await stack.request('POST', `${DATA}/${acme}/${type.key}/batch/delete`, { as: ADMIN, body: { ids: [first.id, second.id] } });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect([...(await storedObjects(first.id, 'scan')), ...(await storedObjects(second.id, 'scan'))]).toEqual([]);
  });

  it("lets only the tenant's writers upload, and nobody else read", async () => {
    const claim = await createClaim();
    await upload(claim.id, 'scan', pdf(), 'scan.pdf');
    const member = await stack.token(MEMBER);
    expect((await download(claim.id, 'scan', member)).status).toBe(200);
    const globex = await stack.token(GLOBEX_ADMIN);
    expect((await download(claim.id, 'scan', globex)).status).toBe(403);
    expect((await upload(claim.id, 'scan', PNG, 'x.png', globex)).status).toBe(403);
    expect((await stack.request('DELETE', `${DATA}/${acme}/${type.key}/${claim.id}/files/scan`, { as: GLOBEX_ADMIN })).status).toBe(403);
    expect(Buffer.from(await (await download(claim.id, 'scan')).arrayBuffer()).equals(pdf())).toBe(true);
  });
});
