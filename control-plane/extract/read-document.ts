import { DomainError, UnsupportedFileTypeError } from '../errors.ts';
import { ACCEPTED_CONTENT_TYPES, detectFormat } from './detect.ts';
import { ExtractionError, SegmentCollector, type Extraction, type ExtractionLimits, type ExtractFormat } from './extraction.ts';
import { decodeText, readMarkdown, readPlainText } from './plain-text.ts';
import { checkImageSize } from './image-size.ts';
import { checkZip, unpackZip } from './zip-package.ts';

/** The readers of binary formats, loaded with the first file of their kind. */
const readers = {
  pdf: () => import('./pdf.ts'),
  rtf: () => import('./rtf.ts'),
  spreadsheet: () => import('./spreadsheet.ts'),
  word: () => import('./word.ts'),
};

/** An image whose header declares no more pixels than the limit: its text is read by OCR, outside this reader. */
export interface ImageToRecognize {
  format: 'image';
  contentType: string;
}

/**
 * Reads a document's text by its detected format, within `limits` (but time and memory, which
 * the caller bounds by running this on a thread of its own: extract.worker.mjs). `onFormat` hears
 * the format as soon as it is known, for the caller's errors. Images are answered, not read.
 */
export async function readDocument(
  bytes: Uint8Array,
  filename: string,
  limits: ExtractionLimits,
  onFormat: (format: ExtractFormat) => void = () => {},
): Promise<Extraction | ImageToRecognize> {
  const { format, contentType } = await detectFormat(bytes, filename);
  onFormat(format);
  if (format === 'image') {
    checkImageSize(bytes, contentType, limits);
    return { format, contentType };
  }
  const collector = new SegmentCollector(limits.maxTextBytes);
  let pages: number | undefined;
  // A ZIP package is unpacked here, within the limits, and handed on uncompressed.
  const content = format === 'docx' || format === 'xlsx' ? unpackZip(bytes, format, limits) : bytes;
  try {
    switch (format) {
      case 'pdf':
        pages = (await (await readers.pdf()).readPdf(content, collector, limits)).pages;
        break;
      case 'docx':
        await (await readers.word()).readDocx(content, collector);
        break;
      case 'doc':
        await (await readers.word()).readDoc(content, collector);
        break;
      case 'xlsx':
        await (await readers.spreadsheet()).readXlsx(content, collector, limits);
        break;
      case 'xls':
        (await readers.spreadsheet()).readXls(content, collector, limits);
        break;
      case 'csv':
        (await readers.spreadsheet()).readCsv(decodeText(content), filename, collector, limits);
        break;
      case 'rtf':
        await (await readers.rtf()).readRtf(content, collector);
        break;
      case 'text':
        readPlainText(decodeText(content), collector);
        break;
      case 'markdown':
        readMarkdown(decodeText(content), collector);
        break;
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
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
}

/**
 * Checks what can be checked of a document without reading its text: a ZIP package (DOCX, XLSX)
 * is inflated within the limits, counting what it gives and keeping nothing; an image's header is
 * held to the pixel limit; a PDF's page tree is
 * walked (the caller's time limit stops one that keeps the reader busy). Answers the format;
 * throws what `readDocument` would throw for a package past a limit. `onFormat` as for `readDocument`.
 */
export async function checkDocument(
  bytes: Uint8Array,
  filename: string,
  limits: ExtractionLimits,
  onFormat: (format: ExtractFormat) => void = () => {},
): Promise<ExtractFormat> {
  const { format, contentType } = await detectFormat(bytes, filename);
  onFormat(format);
  if (format === 'image') checkImageSize(bytes, contentType, limits);
  if (format === 'docx' || format === 'xlsx') checkZip(bytes, format, limits);
  if (format === 'pdf') await (await readers.pdf()).checkPdf(bytes, limits);
  return format;
}

/** A document for the reading thread: `id` tells its answers apart; `check` asks for `checkDocument` instead of a reading. */
export interface ReaderJob {
  id: number;
  bytes: Uint8Array;
  filename: string;
  limits: ExtractionLimits;
  check?: boolean;
}

/** What the reading thread posts for a job: that it started, the format once known, then the extraction (or the checked format) or the error. */
export type ReaderMessage = { id: number } & (
  | { started: true }
  | { format: ExtractFormat }
  | { result: Extraction | ImageToRecognize }
  | { checked: ExtractFormat }
  | { error: ReaderFailure }
);

export type ReaderFailure =
  | { kind: 'unsupported'; contentType: string }
  | { kind: 'extraction'; format: ExtractFormat; issue: string; limit?: number; cause?: string }
  | { kind: 'failed'; message: string };

function failureOf(error: unknown): ReaderFailure {
  if (error instanceof UnsupportedFileTypeError) return { kind: 'unsupported', contentType: String(error.details?.contentType) };
  if (error instanceof ExtractionError) {
    const { issue, limit } = error.details as { issue: string; limit?: number };
    const cause = error.cause instanceof Error ? error.cause.message : error.cause === undefined ? undefined : String(error.cause);
    return { kind: 'extraction', format: error.format, issue, ...(limit === undefined ? {} : { limit }), ...(cause === undefined ? {} : { cause }) };
  }
  return { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
}

/** The error a failure posted by the reading thread stands for, rebuilt on the caller's side. */
export function errorOf(failure: ReaderFailure): Error {
  if (failure.kind === 'unsupported') return new UnsupportedFileTypeError(failure.contentType, ACCEPTED_CONTENT_TYPES);
  if (failure.kind === 'extraction') return new ExtractionError(failure.format, failure.cause === undefined ? undefined : new Error(failure.cause), failure.issue, failure.limit);
  return new Error(`reading the document failed: ${failure.message}`);
}

/** Reads one job on the reading thread (extract.worker.mjs) and posts what `ReaderMessage` says. */
export async function serveReader(port: { postMessage(message: ReaderMessage): void }, job: ReaderJob): Promise<void> {
  const { id } = job;
  port.postMessage({ id, started: true });
  try {
    const onFormat = (format: ExtractFormat) => port.postMessage({ id, format });
    if (job.check) return port.postMessage({ id, checked: await checkDocument(job.bytes, job.filename, job.limits, onFormat) });
    port.postMessage({ id, result: await readDocument(job.bytes, job.filename, job.limits, onFormat) });
  } catch (error) {
    port.postMessage({ id, error: failureOf(error) });
  }
}
