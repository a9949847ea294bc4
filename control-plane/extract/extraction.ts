import { ValidationError } from '../errors.ts';

/** The formats the extractor reads; a file's format is judged by its content, its name only for plain-text kinds. */
export type ExtractFormat = 'pdf' | 'docx' | 'doc' | 'xlsx' | 'xls' | 'csv' | 'rtf' | 'text' | 'markdown' | 'image';

/**
 * Where a segment's text came from, for citations. Numbers are 1-based, as a reader of the file
 * would count them.
 * - `{page}`: a PDF page; an image is page 1.
 * - `{sheet, row}`: a spreadsheet row as the sheet numbers it (XLSX, XLS); for CSV the sheet is
 *   `'csv'` and the row is the record's number, the header being row 1.
 * - `{paragraph, section?}`: the paragraph's number among the document's paragraphs (DOCX, DOC,
 *   RTF, text, Markdown); `section` is the text of the nearest heading above it (DOCX, Markdown).
 */
export type SegmentPosition = { page: number } | { sheet: string; row: number } | { paragraph: number; section?: string };

export interface Segment {
  text: string;
  position: SegmentPosition;
}

export interface Extraction {
  format: ExtractFormat;
  /** The media type the content was recognised as, such as `application/pdf`. */
  contentType: string;
  /** Every segment's text in document order: paragraphs and pages apart by a blank line, rows by a line break. */
  text: string;
  segments: Segment[];
  /** The document's page count (PDF; 1 for an image), even when only the first pages were read. */
  pages?: number;
  /** A limit cut the text short: only the first pages, rows or bytes of text are here. */
  truncated: boolean;
}

/**
 * The file to read: its bytes, or the path of a local file. `filename` names plain-text kinds
 * (`.csv`, `.md`); `owner` (a tenant) is whose reading it is, for sharing the reading threads.
 */
export type ExtractInput = { filename: string; owner?: string } & ({ bytes: Uint8Array; path?: never } | { path: string; bytes?: never });

export interface ExtractionLimits {
  /** UTF-8 bytes of extracted text kept; the rest is dropped and `truncated` set. */
  maxTextBytes: number;
  /** PDF pages read; later pages are skipped. */
  maxPages: number;
  /** Spreadsheet rows read, over all sheets together. */
  maxRows: number;
  /**
   * Bytes a DOCX or XLSX (a ZIP package) may unpack to, counted while it is inflated, whatever
   * its directory declares: a larger one is refused as soon as it passes the limit.
   */
  maxUnpackedBytes: number;
  /** How many times its own size a ZIP package may unpack to, once past `unpackRatioFloorBytes`. */
  maxUnpackRatio: number;
  /** Unpacked bytes any ZIP package may reach whatever its ratio, so that small files are never judged by ratio alone. */
  unpackRatioFloorBytes: number;
  /** Files (entries) in a ZIP package. */
  maxEntries: number;
  /** Wall-clock time one document's reading may take; past it the reader is stopped. */
  timeoutMs: number;
  /** JavaScript heap one document's reader may use (MiB); past it the reader is stopped. */
  maxHeapMb: number;
  /** Pixels an image (PNG, GIF) may declare in its header; a larger one is refused before it is decoded. */
  maxImagePixels: number;
}

/** 200 MiB: a DOCX or XLSX never unpacks to more, however it is compressed. */
export const MAX_UNPACKED_BYTES = 200 * 1024 * 1024;
/** 100:1: office XML compresses 5 to 20 times; a hundred times is a bomb. */
export const MAX_UNPACK_RATIO = 100;
/** 1 MiB: below it the ratio is not looked at. */
export const UNPACK_RATIO_FLOOR_BYTES = 1024 * 1024;
/** 10 000 files in a ZIP package: a long document has a few hundred (one per image). */
export const MAX_ZIP_ENTRIES = 10_000;
/** 60 s to read one document. */
export const EXTRACTION_TIMEOUT_MS = 60_000;
/** 512 MiB of heap to read one document. */
export const EXTRACTION_HEAP_MB = 512;
/** 50 million pixels: a letter or A4 page scanned at 600 dpi has 35 million; OCR holds several copies of it decoded. */
export const MAX_IMAGE_PIXELS = 50_000_000;

export const DEFAULT_EXTRACTION_LIMITS: Readonly<ExtractionLimits> = {
  maxTextBytes: 20 * 1024 * 1024,
  maxPages: 2_000,
  maxRows: 100_000,
  maxUnpackedBytes: MAX_UNPACKED_BYTES,
  maxUnpackRatio: MAX_UNPACK_RATIO,
  unpackRatioFloorBytes: UNPACK_RATIO_FLOOR_BYTES,
  maxEntries: MAX_ZIP_ENTRIES,
  timeoutMs: EXTRACTION_TIMEOUT_MS,
  maxHeapMb: EXTRACTION_HEAP_MB,
  maxImagePixels: MAX_IMAGE_PIXELS,
};

const FORMAT_NAMES: Record<ExtractFormat, string> = {
  pdf: 'PDF document',
  docx: 'Word document (DOCX)',
  doc: 'Word 97-2003 document (DOC)',
  xlsx: 'Excel workbook (XLSX)',
  xls: 'Excel 97-2003 workbook (XLS)',
  csv: 'CSV file',
  rtf: 'RTF document',
  text: 'text file',
  markdown: 'Markdown file',
  image: 'image',
};

/**
 * A file of a format the extractor reads whose content cannot be read: damaged, truncated,
 * encrypted, or past one of the reading limits (then `details.limit` holds the limit's value). A
 * client error (the upload is at fault), so a `VALIDATION_ERROR` on field `file`; the library's own
 * error is kept as `cause` for logs, never sent to clients.
 */
export class ExtractionError extends ValidationError {
  constructor(
    readonly format: ExtractFormat,
    cause?: unknown,
    issue = `is not a readable ${FORMAT_NAMES[format]}`,
    limit?: number,
  ) {
    super(`file ${issue}`, { field: 'file', issue, format, ...(limit === undefined ? {} : { limit }) });
    this.cause = cause;
  }
}

/** C0 controls but tab and line feed, and UTF-16 halves without their pair: text PostgreSQL and JSON would refuse or garble. */
// eslint-disable-next-line no-control-regex -- matches the control characters PostgreSQL text cannot hold or a reader cannot use
const UNSTORABLE = /[\u0000-\u0008\u000b-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text as stored: line breaks as `\n`, form feeds and vertical tabs as line breaks, no control characters, no trailing blanks. */
export function cleanText(text: string): string {
  return text
    .replace(/\r\n?|[\v\f\u2028\u2029]/g, '\n')
    .replace(UNSTORABLE, '')
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

/**
 * Gathers segments up to the text limit: text beyond it is cut (at a character boundary) and
 * `truncated` set, and `full` tells readers to stop.
 */
export class SegmentCollector {
  readonly segments: Segment[] = [];
  truncated = false;
  private bytes = 0;

  constructor(private readonly maxTextBytes: number) {}

  get full(): boolean {
    return this.truncated;
  }

  /** Adds the cleaned text at `position` unless it is blank; `false` once the limit is reached. */
  add(text: string, position: SegmentPosition): boolean {
    if (this.truncated) return false;
    let clean = cleanText(text);
    if (!clean) return true;
    const size = Buffer.byteLength(clean, 'utf8') + 2;
    if (this.bytes + size > this.maxTextBytes) {
      clean = cutToBytes(clean, this.maxTextBytes - this.bytes - 2);
      this.truncated = true;
      if (clean) this.segments.push({ text: clean, position });
      return false;
    }
    this.bytes += size;
    this.segments.push({ text: clean, position });
    return true;
  }
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that does not split a character. */
function cutToBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const decoded = new TextDecoder().decode(Buffer.from(text, 'utf8').subarray(0, maxBytes));
  return decoded.endsWith('\ufffd') && !text.startsWith(decoded) ? decoded.slice(0, -1) : decoded;
}
