import { fileTypeFromBuffer } from 'file-type';
import { UnsupportedFileTypeError } from '../errors.ts';
import { isSurelyText, looksLikeText } from '../extract/plain-text.ts';

/** The upload types of seed 000 ("PDF, DOC, DOCX, TXT, RTF; XLS, XLSX, CSV; JPG, PNG, GIF, WEBP"), as media types. */
export const DOCUMENT_CONTENT_TYPES = [
  'application/pdf',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/plain',
  'application/rtf',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'text/csv',
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
] as const;

/** How many leading bytes are judged: enough for file-type to look into a DOCX's or XLSX's first entries. */
export const HEAD_BYTES = 64 * 1024;

const BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  rtf: 'application/rtf',
  jpg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
};

export const unsupportedUpload = (contentType: string) => new UnsupportedFileTypeError(contentType, DOCUMENT_CONTENT_TYPES);

/**
 * What the leading bytes tell: the media type, or that the file is a compound file (OLE2), which
 * is a DOC or an XLS by the streams its directory names, seen only further on. Throws
 * UNSUPPORTED_FILE_TYPE for anything else. Text (no binary signature, no NUL) is `text/csv` when
 * named `.csv`, else `text/plain`.
 */
export async function judgeHead(head: Uint8Array, filename: string): Promise<{ contentType: string } | { compound: true }> {
  const type = await fileTypeFromBuffer(head);
  if (type) {
    if (type.ext === 'cfb') return { compound: true };
    const known = BY_EXTENSION[type.ext];
    if (known) return { contentType: known };
    if (!isSurelyText(head)) throw unsupportedUpload(type.mime);
  }
  if (/^\s*\{\\rtf/.test(Buffer.from(head.subarray(0, 64)).toString('latin1'))) return { contentType: 'application/rtf' };
  if (!looksLikeText(head)) throw unsupportedUpload('application/octet-stream');
  return { contentType: /\.csv$/i.test(filename) ? 'text/csv' : 'text/plain' };
}

/**
 * A compound-file directory entry naming a stream: the name in UTF-16LE, its terminator and zero
 * padding to 64 bytes, the name's length in bytes (terminator included), and object type 2
 * (stream). Entries sit at 128-byte boundaries of the file.
 */
function directoryEntry(name: string): Buffer {
  const entry = Buffer.alloc(67);
  entry.write(name, 0, 'utf16le');
  entry.writeUInt16LE((name.length + 1) * 2, 64);
  entry[66] = 2;
  return entry;
}

const COMPOUND_STREAMS: Array<[Buffer, string]> = [
  [directoryEntry('WordDocument'), 'application/msword'],
  [directoryEntry('Workbook'), 'application/vnd.ms-excel'],
  [directoryEntry('Book'), 'application/vnd.ms-excel'],
];
const ENTRY_BYTES = 67;

/**
 * Tells a DOC from an XLS as the file streams past, without holding it: it looks for the
 * directory entry of a `WordDocument`, `Workbook` or `Book` stream (as word-extractor and SheetJS
 * would find them), at an entry boundary. The name's zero padding and length make a chance match
 * in document text impossible in practice.
 */
export class CompoundFileScanner {
  private carry = Buffer.alloc(0);
  private offset = 0;
  private readonly found = new Set<string>();

  push(chunk: Uint8Array): void {
    const window = Buffer.concat([this.carry, chunk]);
    const windowStart = this.offset - this.carry.length;
    for (const [entry, contentType] of COMPOUND_STREAMS) {
      for (let at = window.indexOf(entry); at >= 0; at = window.indexOf(entry, at + 1)) {
        if ((windowStart + at) % 128 === 0) this.found.add(contentType);
      }
    }
    this.offset += chunk.byteLength;
    this.carry = window.subarray(Math.max(0, window.length - (ENTRY_BYTES - 1)));
  }

  /**
   * The media type found: a DOC when a `WordDocument` stream is there (a workbook embedded in it
   * does not make it a spreadsheet), as the extractor decides; UNSUPPORTED_FILE_TYPE for a
   * compound file of another kind (PowerPoint, Outlook).
   */
  result(): string {
    if (this.found.has('application/msword')) return 'application/msword';
    if (this.found.has('application/vnd.ms-excel')) return 'application/vnd.ms-excel';
    throw unsupportedUpload('application/x-cfb');
  }
}
