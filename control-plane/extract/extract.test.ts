import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UnsupportedFileTypeError } from '../errors.ts';
import { crowdedDocx, hugeGif, hugePng, nestedXlsx, understatedDocx, widePageTreePdf } from './fixtures/bombs.ts';
import { createExtractor, ExtractionError, type Extraction, type OcrEngine } from './extractor.ts';
import { withoutInfoGroup } from './rtf.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(`${FIXTURES}${name}`));

const extractor = createExtractor();
afterAll(() => extractor.close());

const extract = (filename: string, bytes: Uint8Array = fixture(filename)) => extractor.extract({ filename, bytes });
/** The segment holding `words`; fails the test when none does. */
function segmentWith(extraction: Extraction, words: string) {
  const segment = extraction.segments.find((s) => s.text.includes(words));
  expect(segment, `a segment holding "${words}" in ${JSON.stringify(extraction.segments)}`).toBeDefined();
  return segment!;
}

describe('extract', () => {
  it('reads a PDF page by page', async () => {
    const pdf = await extract('sample.pdf');
    expect(pdf).toMatchObject({ format: 'pdf', contentType: 'application/pdf', pages: 2, truncated: false });
    expect(pdf.text).toContain('Quarterly report for Northwind');
    expect(segmentWith(pdf, 'Quarterly report for Northwind').position).toEqual({ page: 1 });
    expect(segmentWith(pdf, 'Appendix: turnover figures').position).toEqual({ page: 2 });
    expect(segmentWith(pdf, 'Page two closes the report').position).toEqual({ page: 2 });
  });

  it('reads only the first pages of a PDF over the page limit', async () => {
    const small = createExtractor({ limits: { maxPages: 1 } });
    const pdf = await small.extract({ filename: 'sample.pdf', path: `${FIXTURES}sample.pdf` });
    await small.close();
    expect(pdf).toMatchObject({ pages: 2, truncated: true });
    expect(pdf.segments.map((s) => s.position)).toEqual([{ page: 1 }]);
  });

  it('reads a DOCX by paragraphs, under their headings', async () => {
    const docx = await extract('sample.docx');
    expect(docx).toMatchObject({ format: 'docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    expect(docx.segments).toEqual([
      { text: 'Project Charter', position: { paragraph: 1, section: 'Project Charter' } },
      { text: 'The charter names Ada Lovelace as sponsor.', position: { paragraph: 2, section: 'Project Charter' } },
      { text: 'Milestones', position: { paragraph: 3, section: 'Milestones' } },
      { text: 'Prototype ready by March.', position: { paragraph: 4, section: 'Milestones' } },
      { text: 'Pilot with two customers in May.', position: { paragraph: 5, section: 'Milestones' } },
    ]);
  });

  it('reads a Word 97-2003 document (a compound file holding WordDocument)', async () => {
    const doc = await extract('sample.doc');
    expect(doc).toMatchObject({ format: 'doc', contentType: 'application/msword' });
    expect(segmentWith(doc, 'Minutes of the board meeting').position).toEqual({ paragraph: 1 });
    expect(segmentWith(doc, 'Budget approved for the Lisbon office').position).toEqual({ paragraph: 2 });
  });

  it('reads an XLSX row by row, with the sheet and row of each', async () => {
    const xlsx = await extract('sample.xlsx');
    expect(xlsx).toMatchObject({ format: 'xlsx', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(xlsx.segments).toEqual([
      { text: 'Order\tCustomer\tAmount', position: { sheet: 'Orders', row: 1 } },
      { text: '1001\tContoso\t250.5', position: { sheet: 'Orders', row: 2 } },
      { text: '1002\tFabrikam\t99', position: { sheet: 'Orders', row: 3 } },
      { text: 'Shipping delayed by the harbour strike', position: { sheet: 'Notes', row: 1 } },
    ]);
    expect(xlsx.text).toBe(xlsx.segments.map((s) => s.text).join('\n'));
  });

  it('reads an XLS (a compound file holding Workbook) as an XLSX', async () => {
    const xls = await extract('sample.xls');
    expect(xls).toMatchObject({ format: 'xls', contentType: 'application/vnd.ms-excel' });
    expect(segmentWith(xls, 'Fabrikam')).toEqual({ text: '1002\tFabrikam\t99', position: { sheet: 'Orders', row: 3 } });
    expect(segmentWith(xls, 'harbour strike').position).toEqual({ sheet: 'Notes', row: 1 });
  });

  it('stops at the row limit over all sheets', async () => {
    const small = createExtractor({ limits: { maxRows: 2 } });
    const xlsx = await small.extract({ filename: 'sample.xlsx', bytes: fixture('sample.xlsx') });
    await small.close();
    expect(xlsx.truncated).toBe(true);
    expect(xlsx.segments.map((s) => s.position)).toEqual([
      { sheet: 'Orders', row: 1 },
      { sheet: 'Orders', row: 2 },
    ]);
  });

  it('reads a CSV by records, quoted delimiters kept', async () => {
    const csv = await extract('sample.csv');
    expect(csv).toMatchObject({ format: 'csv', contentType: 'text/csv' });
    expect(segmentWith(csv, 'Bob')).toEqual({ text: 'Bob\tOslo, Norway\t20', position: { sheet: 'csv', row: 3 } });
    expect(segmentWith(csv, 'Alice').position).toEqual({ sheet: 'csv', row: 2 });
  });

  it('reads a semicolon-separated CSV', async () => {
    const csv = await extract('prices.csv', new TextEncoder().encode('item;price\nTea;3,50\n'));
    expect(csv.segments).toEqual([
      { text: 'item\tprice', position: { sheet: 'csv', row: 1 } },
      { text: 'Tea\t3,50', position: { sheet: 'csv', row: 2 } },
    ]);
  });

  it('reads an RTF without its info group, decoding its escapes', async () => {
    const rtf = await extract('sample.rtf');
    expect(rtf).toMatchObject({ format: 'rtf', contentType: 'application/rtf' });
    expect(rtf.text).not.toContain('Draft memo title');
    expect(rtf.text).not.toContain('Records Office');
    expect(segmentWith(rtf, 'Rotterdam warehouse').position).toEqual({ paragraph: 1 });
    expect(segmentWith(rtf, 'Café supplies cost € 1200').position).toEqual({ paragraph: 2 });
  });

  it('strips a nested info group with escaped braces', () => {
    expect(withoutInfoGroup(String.raw`{\rtf1{\info{\title a \} b}{\author c}}body}`)).toBe(String.raw`{\rtf1body}`);
  });

  it('reads plain text by paragraphs', async () => {
    const text = await extract('sample.txt');
    expect(text).toMatchObject({ format: 'text', contentType: 'text/plain' });
    expect(text.segments).toEqual([
      { text: 'Meeting notes from Tuesday.\nThe team agreed on the roadmap.', position: { paragraph: 1 } },
      { text: 'Action item: renew the Zurich lease.', position: { paragraph: 2 } },
    ]);
  });

  it('reads text that is not UTF-8 as Windows-1252, without its control characters', async () => {
    const text = await extract('notes.txt', new Uint8Array([0x43, 0x61, 0x66, 0xe9, 0x07, 0x0a]));
    expect(text.text).toBe('Café');
  });

  it('reads UTF-16 text with a byte order mark, whose first bytes look like MPEG audio', async () => {
    const bytes = new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße\n\nzweiter Absatz', 'utf16le')]));
    const text = await extract('notes.txt', bytes);
    expect(text).toMatchObject({ format: 'text', text: 'Grüße\n\nzweiter Absatz' });
  });

  it('reads Markdown by paragraphs, under their headings', async () => {
    const md = await extract('sample.md');
    expect(md).toMatchObject({ format: 'markdown', contentType: 'text/markdown' });
    expect(md.segments).toEqual([
      { text: 'Release plan', position: { paragraph: 1, section: 'Release plan' } },
      { text: 'Ship version two in June.', position: { paragraph: 2, section: 'Release plan' } },
      { text: 'Risks', position: { paragraph: 3, section: 'Risks' } },
      { text: 'The vendor contract expires in April.', position: { paragraph: 4, section: 'Risks' } },
    ]);
  });

  it('judges the format by content, not by name', async () => {
    const pdf = await extract('report.txt', fixture('sample.pdf'));
    expect(pdf.format).toBe('pdf');
  });

  it('cuts the text at the text limit, at a character boundary', async () => {
    const small = createExtractor({ limits: { maxTextBytes: 12 } });
    const text = await small.extract({ filename: 'a.txt', bytes: new TextEncoder().encode('Grüße aus Köln\n\nzweiter Absatz') });
    await small.close();
    expect(text).toMatchObject({ truncated: true, text: 'Grüße au' });
  });

  it('refuses a file of a type it does not read', async () => {
    const photoshop = new Uint8Array([...new TextEncoder().encode('8BPS'), 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 8, 0, 3]);
    await expect(extract('picture.psd', photoshop)).rejects.toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE', details: { contentType: 'image/vnd.adobe.photoshop' } });
    await expect(extract('program.bin', new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0, 1, 2, 3]))).rejects.toBeInstanceOf(UnsupportedFileTypeError);
    await expect(extract('blob.txt', new Uint8Array([1, 0, 2, 0, 3]))).rejects.toMatchObject({ details: { contentType: 'application/octet-stream' } });
  });

  it('refuses a GIF without a readable frame with a clear error', async () => {
    const empty = new TextEncoder().encode('GIF89a\x01\x00\x01\x00\x00\x00\x00;');
    await expect(extract('picture.gif', empty)).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'file', format: 'image', issue: 'is not a readable image' } });
  });

  it('refuses a damaged PDF with a clear error', async () => {
    const damaged = new Uint8Array([...new TextEncoder().encode('%PDF-1.7\n'), ...new Uint8Array(300).fill(7)]);
    const error = await extract('broken.pdf', damaged).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractionError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'file is not a readable PDF document', details: { field: 'file', format: 'pdf' } });
  });

  it('refuses a damaged XLSX and a damaged DOC', async () => {
    const xlsx = fixture('sample.xlsx');
    await expect(extract('broken.xlsx', xlsx.subarray(0, xlsx.length - 200))).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { format: 'xlsx' } });
    const doc = fixture('sample.doc');
    await expect(extract('broken.doc', doc.subarray(0, 1024))).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { format: 'doc' } });
  });

  it('refuses a DOCX or XLSX that would unpack to more than the limit, before unpacking it', async () => {
    const small = createExtractor({ limits: { maxUnpackedBytes: 1000 } });
    await expect(small.extract({ filename: 'sample.docx', bytes: fixture('sample.docx') })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'file', issue: 'unpacks to more than 1000 bytes', format: 'docx' },
    });
    await expect(small.extract({ filename: 'sample.xlsx', bytes: fixture('sample.xlsx') })).rejects.toMatchObject({ details: { format: 'xlsx' } });
    await small.close();
  });

  it('counts what a DOCX really unpacks to, not what its directory claims, and stops at the ratio or the size limit', async () => {
    // 16 MiB of paragraphs in about 60 KB, the headers claiming 2 000 bytes.
    const bomb = understatedDocx(16);
    await expect(extract('charter.docx', bomb)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'file unpacks to more than 100 times its own size',
      details: { field: 'file', format: 'docx', limit: 100 },
    });
    const bySize = createExtractor({ limits: { maxUnpackRatio: 100_000, maxUnpackedBytes: 8 * 1024 * 1024 } });
    await expect(bySize.extract({ filename: 'charter.docx', bytes: bomb })).rejects.toMatchObject({
      details: { issue: `unpacks to more than ${8 * 1024 * 1024} bytes`, format: 'docx', limit: 8 * 1024 * 1024 },
    });
    await bySize.close();
  });

  it('checks a ZIP package and a PDF within the limits without reading their text, and lets other files through', async () => {
    await expect(extractor.check({ filename: 'charter.docx', bytes: understatedDocx(16) })).rejects.toMatchObject({
      message: 'file unpacks to more than 100 times its own size',
      details: { field: 'file', format: 'docx', limit: 100 },
    });
    await expect(extractor.check({ filename: 'sample.docx', bytes: fixture('sample.docx') })).resolves.toBe('docx');
    await expect(extractor.check({ filename: 'sample.xlsx', bytes: fixture('sample.xlsx') })).resolves.toBe('xlsx');
    await expect(extractor.check({ filename: 'sample.pdf', bytes: fixture('sample.pdf') })).resolves.toBe('pdf');
    // A damaged PDF is no limit passed: its reading says what is wrong with it.
    const damaged = new Uint8Array([...new TextEncoder().encode('%PDF-1.7\n'), ...new Uint8Array(300).fill(7)]);
    await expect(extractor.check({ filename: 'damaged.pdf', bytes: damaged })).resolves.toBe('pdf');
    await expect(extractor.check({ filename: 'sample.txt', bytes: fixture('sample.txt') })).resolves.toBe('text');
  });

  it('stops the check of a PDF whose page tree keeps the reader busy at the time limit, and checks the next PDF', async () => {
    const small = createExtractor({ limits: { timeoutMs: 2_000 } });
    await expect(small.check({ filename: 'pages.pdf', bytes: widePageTreePdf(200_000) })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'file took longer than 2 s to read',
      details: { field: 'file', issue: 'took longer than 2 s to read', format: 'pdf', limit: 2_000 },
    });
    await expect(small.check({ filename: 'sample.pdf', bytes: fixture('sample.pdf') })).resolves.toBe('pdf');
    await small.close();
  }, 60_000);

  it('refuses a ZIP package of more files than the limit', async () => {
    const small = createExtractor({ limits: { maxEntries: 10 } });
    await expect(small.extract({ filename: 'crowded.docx', bytes: crowdedDocx(30) })).rejects.toMatchObject({
      details: { field: 'file', issue: 'holds more than 10 files', format: 'docx', limit: 10 },
    });
    await small.close();
  });

  it('stops a deeply nested XLSX at the heap limit, and reads the next workbook on a new thread', async () => {
    // Past the ratio limit too: let it through to the reader, whose heap is what is tested.
    const small = createExtractor({ limits: { maxUnpackRatio: 100_000, maxHeapMb: 64 } });
    await expect(small.extract({ filename: 'deep.xlsx', bytes: nestedXlsx(1_000_000) })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'file needs more than 64 MiB of memory to read',
      details: { field: 'file', format: 'xlsx', limit: 64 },
    });
    expect((await small.extract({ filename: 'sample.xlsx', bytes: fixture('sample.xlsx') })).segments).toHaveLength(4);
    await small.close();
  }, 60_000);

  it('stops a PDF whose page tree keeps the reader busy at the time limit, and reads the next PDF', async () => {
    // One page listed 200 000 times: each page opened walks the whole list.
    const small = createExtractor({ limits: { timeoutMs: 2_000 } });
    await expect(small.extract({ filename: 'pages.pdf', bytes: widePageTreePdf(200_000) })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'file took longer than 2 s to read',
      details: { field: 'file', format: 'pdf', limit: 2_000 },
    });
    expect((await small.extract({ filename: 'sample.pdf', bytes: fixture('sample.pdf') })).pages).toBe(2);
    await small.close();
  }, 60_000);

  it('reads the words in an image by OCR', { timeout: 60_000 }, async () => {
    const image = await extract('ocr.png');
    expect(image).toMatchObject({ format: 'image', contentType: 'image/png', pages: 1 });
    expect(image.text.toLowerCase()).toContain('invoice 4711 total 99.50');
    expect(image.segments[0]?.position).toEqual({ page: 1 });
  });

  it("reads the words in a GIF's first frame by OCR, as page 1", { timeout: 60_000 }, async () => {
    const image = await extract('ocr.gif');
    expect(image).toMatchObject({ format: 'image', contentType: 'image/gif', pages: 1 });
    expect(image.text.toLowerCase()).toContain('invoice 4711 total 99.50');
    expect(image.segments[0]?.position).toEqual({ page: 1 });
  });

  it('refuses an image whose header declares more pixels than the limit, quickly and before OCR, then reads the next image', { timeout: 60_000 }, async () => {
    for (const [filename, bytes] of [['huge.png', hugePng(50_000, 50_000)], ['huge.gif', hugeGif(50_000, 50_000)]] as const) {
      const started = Date.now();
      const refused = { code: 'VALIDATION_ERROR', message: 'file has more than 50000000 pixels (50000 x 50000)', details: { field: 'file', format: 'image', limit: 50_000_000 } };
      await expect(extract(filename, bytes)).rejects.toMatchObject(refused);
      await expect(extractor.check({ filename, bytes })).rejects.toMatchObject(refused);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    // Under the limit, the same header reading passes an image on to OCR.
    expect((await extract('ocr.png')).text.toLowerCase()).toContain('invoice 4711 total 99.50');
    expect(await extractor.check({ filename: 'ocr.gif', bytes: fixture('ocr.gif') })).toBe('image');
  });

  it('stops OCR at the time limit, ending its engine, and reads the next image', async () => {
    let closed = 0;
    let calls = 0;
    const ocr: OcrEngine = { recognize: () => (++calls === 1 ? new Promise<string>(() => {}) : Promise.resolve('Invoice 4711')), close: async () => void closed++ };
    const own = createExtractor({ ocr, limits: { timeoutMs: 1_000 } });
    await expect(own.extract({ filename: 'ocr.png', bytes: fixture('ocr.png') })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'file took longer than 1 s to read',
      details: { field: 'file', format: 'image', limit: 1_000 },
    });
    expect(closed).toBe(1);
    expect((await own.extract({ filename: 'ocr.png', bytes: fixture('ocr.png') })).text).toBe('Invoice 4711');
    await own.close();
  });

  it('closes its OCR engine and refuses work afterwards', async () => {
    let closed = 0;
    const ocr: OcrEngine = { recognize: async () => 'never', close: async () => void closed++ };
    const own = createExtractor({ ocr });
    await own.close();
    await own.close();
    expect(closed).toBe(2);
    await expect(own.extract({ filename: 'a.txt', bytes: new Uint8Array([0x61]) })).rejects.toThrow('closed');
  });
});
