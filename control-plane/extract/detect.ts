import * as XLSX from '@e965/xlsx';
import { fileTypeFromBuffer } from 'file-type';
import { UnsupportedFileTypeError } from '../errors.ts';
import { ExtractionError, type ExtractFormat } from './extraction.ts';
import { isSurelyText, looksLikeText } from './plain-text.ts';

export interface DetectedFormat {
  format: ExtractFormat;
  contentType: string;
}

/** The media types the extractor reads, as `UnsupportedFileTypeError` lists them. */
export const ACCEPTED_CONTENT_TYPES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-excel',
  'text/csv',
  'text/tab-separated-values',
  'application/rtf',
  'text/plain',
  'text/markdown',
  'image/png',
  'image/jpeg',
  'image/tiff',
  'image/bmp',
  'image/webp',
  'image/gif',
] as const;

const BY_EXTENSION: Record<string, ExtractFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  xlsx: 'xlsx',
  rtf: 'rtf',
  png: 'image',
  jpg: 'image',
  tif: 'image',
  bmp: 'image',
  webp: 'image',
  gif: 'image',
};

const unsupported = (contentType: string) => new UnsupportedFileTypeError(contentType, ACCEPTED_CONTENT_TYPES);

/**
 * A compound file (OLE2) is a Word 97-2003 document when it holds a `WordDocument` stream and an
 * Excel 97-2003 workbook when it holds `Workbook` (BIFF8) or `Book` (BIFF5); anything else in one
 * (PowerPoint, Outlook messages, installers) is refused. A damaged one is taken for what its name says.
 */
function compoundFileFormat(bytes: Uint8Array, filename: string): DetectedFormat {
  let names: string[];
  try {
    names = XLSX.CFB.read(bytes, { type: 'array' }).FullPaths.map((path: string) => path.replace(/\/$/, '').split('/').pop()!.toLowerCase());
  } catch (error) {
    throw new ExtractionError(/\.xls$/i.test(filename) ? 'xls' : 'doc', error);
  }
  if (names.includes('worddocument')) return { format: 'doc', contentType: 'application/msword' };
  if (names.includes('workbook') || names.includes('book')) return { format: 'xls', contentType: 'application/vnd.ms-excel' };
  throw unsupported('application/x-cfb');
}

/**
 * The file's format, judged by its content (`file-type`); only text (content without a binary
 * signature of a format read here, or text that matches another by chance) is told apart by its name: `.csv`/`.tsv` as CSV, `.md`/`.markdown` as Markdown, any other as
 * plain text. Throws `UnsupportedFileTypeError` for anything else.
 */
export async function detectFormat(bytes: Uint8Array, filename: string): Promise<DetectedFormat> {
  const type = await fileTypeFromBuffer(bytes);
  if (type) {
    if (type.ext === 'cfb') return compoundFileFormat(bytes, filename);
    const format = BY_EXTENSION[type.ext];
    if (format) return { format, contentType: type.mime };
    if (!isSurelyText(bytes)) throw unsupported(type.mime);
  }
  if (/^\s*\{\\rtf/.test(Buffer.from(bytes.subarray(0, 64)).toString('latin1'))) return { format: 'rtf', contentType: 'application/rtf' };
  if (!looksLikeText(bytes)) throw unsupported('application/octet-stream');
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  if (extension === 'csv' || extension === 'tsv') return { format: 'csv', contentType: extension === 'csv' ? 'text/csv' : 'text/tab-separated-values' };
  if (extension === 'md' || extension === 'markdown') return { format: 'markdown', contentType: 'text/markdown' };
  return { format: 'text', contentType: 'text/plain' };
}
