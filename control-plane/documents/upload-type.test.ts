import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as XLSX from '@e965/xlsx';
import { describe, expect, it } from 'vitest';
import { CompoundFileScanner, judgeHead } from './upload-type.ts';

const FIXTURES = fileURLToPath(new URL('../extract/fixtures/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(`${FIXTURES}${name}`));

/** The compound-file verdict of `bytes` streamed in pieces of `size` bytes. */
function scan(bytes: Uint8Array, size: number): string {
  const scanner = new CompoundFileScanner();
  for (let at = 0; at < bytes.length; at += size) scanner.push(bytes.subarray(at, at + size));
  return scanner.result();
}

describe('upload types', () => {
  it('tells a DOC from an XLS by their compound-file directories, however the bytes arrive', () => {
    for (const size of [1, 67, 500, 4096, 1 << 20]) {
      expect(scan(fixture('sample.doc'), size)).toBe('application/msword');
      expect(scan(fixture('sample.xls'), size)).toBe('application/vnd.ms-excel');
    }
  });

  it('refuses a compound file that is neither, and is not fooled by the names in text', async () => {
    const other = XLSX.CFB.utils.cfb_new();
    XLSX.CFB.utils.cfb_add(other, 'PowerPoint Document', Buffer.alloc(600, 1));
    const bytes = new Uint8Array(XLSX.CFB.write(other, { type: 'buffer' }) as Buffer);
    await expect(judgeHead(bytes, 'slides.doc')).resolves.toEqual({ compound: true });
    expect(() => scan(bytes, 512)).toThrow(/application\/x-cfb/);
    const text = Buffer.from('WordDocument Workbook Book', 'utf16le');
    expect(() => scan(Buffer.concat([Buffer.alloc(128), text, Buffer.alloc(256)]), 64)).toThrow(/not accepted/);
  });

  it('judges the leading bytes: binary formats by their signature, text by its name', async () => {
    expect(await judgeHead(fixture('sample.pdf'), 'x.bin')).toEqual({ contentType: 'application/pdf' });
    expect(await judgeHead(fixture('sample.docx').subarray(0, 4096), 'x')).toEqual({ contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    expect(await judgeHead(fixture('sample.rtf'), 'x.txt')).toEqual({ contentType: 'application/rtf' });
    expect(await judgeHead(fixture('sample.csv'), 'orders.csv')).toEqual({ contentType: 'text/csv' });
    expect(await judgeHead(fixture('sample.csv'), 'orders.txt')).toEqual({ contentType: 'text/plain' });
    expect(await judgeHead(fixture('sample.md'), 'notes.md')).toEqual({ contentType: 'text/plain' });
    expect(await judgeHead(fixture('ocr.png'), 'scan')).toEqual({ contentType: 'image/png' });
    await expect(judgeHead(Buffer.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0]), 'a.gif')).resolves.toEqual({ contentType: 'image/gif' });
    await expect(judgeHead(Buffer.from('PK\u0003\u0004 not an office file'), 'a.docx')).rejects.toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
    await expect(judgeHead(Buffer.from([0, 1, 2, 3, 0, 0, 0, 9]), 'a.txt')).rejects.toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE', details: { contentType: 'application/octet-stream' } });
  });
});
