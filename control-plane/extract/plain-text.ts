import iconv from 'iconv-lite';
import type { SegmentCollector } from './extraction.ts';

/**
 * Bytes as text: UTF-8 (a BOM dropped), UTF-16 with a BOM, else Windows-1252, the usual
 * encoding of text that is not valid UTF-8.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'win1252');
  }
}

const hasUtf16Bom = (bytes: Uint8Array) => (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);

/** Whether bytes look like text rather than binary data: a UTF-16 BOM, or no NUL byte in the first 8 KiB. */
export function looksLikeText(bytes: Uint8Array): boolean {
  return hasUtf16Bom(bytes) || !bytes.subarray(0, 8192).includes(0);
}

/**
 * Whether bytes are surely text: a UTF-16 BOM, or a first 8 KiB of valid UTF-8 without control
 * characters but tab, line breaks and form feed. Binary signatures can be as short as two bytes
 * (MPEG audio's frame sync), so text may match one by chance.
 */
export function isSurelyText(bytes: Uint8Array): boolean {
  if (hasUtf16Bom(bytes)) return true;
  try {
    const head = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, 8192), { stream: true });
    // eslint-disable-next-line no-control-regex -- control characters are what tells binary from text
    return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(head);
  } catch {
    return false;
  }
}

/** Paragraphs apart by blank lines, numbered from 1. */
export function readPlainText(text: string, collector: SegmentCollector): void {
  let paragraph = 0;
  for (const block of text.split(/\r?\n[ \t]*(?:\r?\n)+/)) {
    if (!block.trim()) continue;
    paragraph += 1;
    if (!collector.add(block, { paragraph })) return;
  }
}

const ATX_HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(?:```|~~~)/;

/**
 * Markdown paragraphs apart by blank lines; a heading line is a paragraph of its own (its text
 * without the `#` marks) and names the section of the paragraphs under it. Fenced code stays whole.
 */
export function readMarkdown(text: string, collector: SegmentCollector): void {
  let paragraph = 0;
  let section: string | undefined;
  let lines: string[] = [];
  let fenced = false;
  const flush = (): boolean => {
    const block = lines.join('\n');
    lines = [];
    if (!block.trim()) return true;
    paragraph += 1;
    return collector.add(block, section === undefined ? { paragraph } : { paragraph, section });
  };
  for (const line of text.split(/\r?\n/)) {
    const heading = fenced ? null : ATX_HEADING.exec(line);
    if (FENCE.test(line)) fenced = !fenced;
    if (heading?.[2]) {
      if (!flush()) return;
      section = heading[2];
      lines = [section];
      if (!flush()) return;
    } else if (fenced) {
      lines.push(line);
    } else if (!line.trim()) {
      if (!flush()) return;
    } else {
      lines.push(line);
    }
  }
  flush();
}
