import { readFile } from 'node:fs/promises';
import { DomainError } from '../errors.ts';
import { detectFormat } from './detect.ts';
import {
  DEFAULT_EXTRACTION_LIMITS,
  ExtractionError,
  SegmentCollector,
  type Extraction,
  type ExtractionLimits,
  type ExtractInput,
} from './extraction.ts';
import { createTesseractEngine, OcrUnavailableError, type OcrEngine } from './ocr.ts';
import { decodeText, readMarkdown, readPlainText } from './plain-text.ts';
import { checkUnpackedSize } from './zip-package.ts';

/** The readers of binary formats, loaded with the first file of their kind: together they hold tens of MiB a process that reads none should not carry. */
const readers = {
  pdf: () => import('./pdf.ts'),
  rtf: () => import('./rtf.ts'),
  spreadsheet: () => import('./spreadsheet.ts'),
  word: () => import('./word.ts'),
};

export { DEFAULT_EXTRACTION_LIMITS, ExtractionError } from './extraction.ts';
export type { Extraction, ExtractionLimits, ExtractFormat, ExtractInput, Segment, SegmentPosition } from './extraction.ts';
export { ACCEPTED_CONTENT_TYPES } from './detect.ts';
export type { OcrEngine } from './ocr.ts';

/** Reads a document's text, segment by segment, each with where it came from. */
export interface Extractor {
  /**
   * The file's text and segments. Throws `UnsupportedFileTypeError` for a format it does not read
   * and `ExtractionError` for a file of a known format whose content cannot be read.
   */
  extract(input: ExtractInput): Promise<Extraction>;
  /** Ends the OCR worker, if one started; later calls to `extract` fail. Idempotent. */
  close(): Promise<void>;
}

export interface ExtractorOptions {
  limits?: Partial<ExtractionLimits>;
  /** Defaults to Tesseract with the English model shipped in node_modules, started on the first image. */
  ocr?: OcrEngine;
}

/**
 * The platform's document text extractor: PDF (unpdf), DOCX (mammoth), DOC (word-extractor),
 * XLSX (exceljs), XLS (SheetJS), CSV (csv-parse), RTF (rtf-stream-parser), plain text, Markdown,
 * and images by OCR (tesseract.js). Pure machinery: bytes in, text out; no I/O but reading
 * `input.path`. Create one per process and `close()` it on shutdown.
 */
export function createExtractor(options: ExtractorOptions = {}): Extractor {
  const limits: ExtractionLimits = { ...DEFAULT_EXTRACTION_LIMITS, ...options.limits };
  const ocr = options.ocr ?? createTesseractEngine();
  let closed = false;

  return {
    async extract(input) {
      if (closed) throw new Error('the extractor is closed');
      const bytes = input.bytes ?? new Uint8Array(await readFile(input.path));
      const { format, contentType } = await detectFormat(bytes, input.filename);
      const collector = new SegmentCollector(limits.maxTextBytes);
      let pages: number | undefined;
      if (format === 'docx' || format === 'xlsx') checkUnpackedSize(bytes, format, limits.maxUnpackedBytes);
      try {
        switch (format) {
          case 'pdf':
            pages = (await (await readers.pdf()).readPdf(bytes, collector, limits)).pages;
            break;
          case 'docx':
            await (await readers.word()).readDocx(bytes, collector);
            break;
          case 'doc':
            await (await readers.word()).readDoc(bytes, collector);
            break;
          case 'xlsx':
            await (await readers.spreadsheet()).readXlsx(bytes, collector, limits);
            break;
          case 'xls':
            (await readers.spreadsheet()).readXls(bytes, collector, limits);
            break;
          case 'csv':
            (await readers.spreadsheet()).readCsv(decodeText(bytes), input.filename, collector, limits);
            break;
          case 'rtf':
            await (await readers.rtf()).readRtf(bytes, collector);
            break;
          case 'text':
            readPlainText(decodeText(bytes), collector);
            break;
          case 'markdown':
            readMarkdown(decodeText(bytes), collector);
            break;
          case 'image':
            collector.add(await ocr.recognize(bytes), { page: 1 });
            pages = 1;
            break;
        }
      } catch (error) {
        if (error instanceof DomainError || error instanceof OcrUnavailableError) throw error;
        throw new ExtractionError(format, error);
      }
      const { segments, truncated } = collector;
      const separator = format === 'xlsx' || format === 'xls' || format === 'csv' ? '\n' : '\n\n';
      return {
        format,
        contentType,
        text: segments.map((s) => s.text).join(separator),
        segments,
        ...(pages === undefined ? {} : { pages }),
        truncated,
      };
    },
    async close() {
      closed = true;
      await ocr.close();
    },
  };
}
