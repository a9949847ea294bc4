import { describe, expect, it } from 'vitest';
import { readMultipartForm, type MultipartOptions } from './multipart.ts';

/** A request carrying `entries` as a browser's form (a Request's stream, as Bun gives it). */
function formRequest(entries: Array<[string, string] | [string, Uint8Array, string]>): Request {
  const form = new FormData();
  for (const entry of entries) {
    if (entry.length === 2) form.append(entry[0], entry[1]);
    else form.append(entry[0], new Blob([entry[1]]), entry[2]);
  }
  return new Request('http://edge.test/upload', { method: 'POST', body: form });
}

/** Reads the form, collecting each file's bytes. */
async function read(request: Request, options: Partial<MultipartOptions> = {}) {
  const files: Array<{ field: string; filename: string; bytes: Buffer; before: string[] }> = [];
  const result = await readMultipartForm(request, {
    fileFields: ['file'],
    textFields: ['type', 'tags'],
    maxFiles: 2,
    maxFileBytes: 10,
    onFile: async (file, before) => {
      const chunks: Buffer[] = [];
      for await (const chunk of file.stream) chunks.push(chunk as Buffer);
      files.push({ field: file.field, filename: file.filename, bytes: Buffer.concat(chunks), before: [...before.keys()] });
    },
    ...options,
  });
  return { ...result, uploaded: files };
}

describe('readMultipartForm', () => {
  it('hands each file over in order with the fields sent before it, and collects every field', async () => {
    const result = await read(formRequest([['type', 'memo'], ['file', Buffer.from('0123456789'), 'a.txt'], ['tags', 'x'], ['file', Buffer.from('abc'), 'b.txt']]));
    expect(result.files).toBe(2);
    expect(Object.fromEntries(result.fields)).toEqual({ type: 'memo', tags: 'x' });
    expect(result.uploaded).toEqual([
      { field: 'file', filename: 'a.txt', bytes: Buffer.from('0123456789'), before: ['type'] },
      { field: 'file', filename: 'b.txt', bytes: Buffer.from('abc'), before: ['type', 'tags'] },
    ]);
  });

  it('takes a file of exactly the limit and refuses one byte more (FILE_TOO_LARGE)', async () => {
    await expect(read(formRequest([['file', Buffer.alloc(10, 1), 'exact.bin']]))).resolves.toMatchObject({ files: 1 });
    await expect(read(formRequest([['file', Buffer.alloc(11, 1), 'over.bin']]))).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', details: { limit: 10 } });
  });

  it('refuses what the form does not take, naming it', async () => {
    const field = (request: Request, options?: Partial<MultipartOptions>) => read(request, options).then(() => undefined, (error) => [error.code, error.details?.field]);
    expect(await field(formRequest([['colour', 'red']]))).toEqual(['VALIDATION_ERROR', 'colour']);
    expect(await field(formRequest([['type', 'a'], ['type', 'b']]))).toEqual(['VALIDATION_ERROR', 'type']);
    expect(await field(formRequest([['photo', Buffer.from('x'), 'p.png']]))).toEqual(['VALIDATION_ERROR', 'photo']);
    expect(await field(formRequest([['file', Buffer.from('x'), 'a'], ['file', Buffer.from('y'), 'b']]), { maxFiles: 1 })).toEqual(['VALIDATION_ERROR', 'file']);
    expect(await field(new Request('http://edge.test/upload', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }))).toEqual(['VALIDATION_ERROR', '(body)']);
    expect(await field(new Request('http://edge.test/upload', { method: 'POST', body: '--x\r\nbroken', headers: { 'content-type': 'multipart/form-data; boundary=x' } }))).toEqual([
      'VALIDATION_ERROR',
      '(body)',
    ]);
  });

  it('ends the form with the error of a file that could not be stored', async () => {
    const refused = read(formRequest([['file', Buffer.from('abc'), 'a.txt']]), {
      onFile: async () => {
        throw Object.assign(new Error('refused'), { code: 'UNSUPPORTED_FILE_TYPE' });
      },
    });
    await expect(refused).rejects.toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
  });

  it('ends a failed form only once the file being stored has settled, so that its caller can discard what was stored', async () => {
    const stored: string[] = [];
    const refused = read(formRequest([['file', Buffer.from('abc'), 'a.txt'], ['file', Buffer.from('def'), 'b.txt']]), {
      maxFiles: 1,
      onFile: async (file) => {
        for await (const _ of file.stream);
        // Storing goes on after the file has been read, while the form fails on its second file.
        await new Promise((resolve) => setTimeout(resolve, 50));
        stored.push(file.filename);
      },
    });
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'file' } });
    expect(stored).toEqual(['a.txt']);
  });
});
