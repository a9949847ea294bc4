import mammoth from 'mammoth';
import WordExtractor from 'word-extractor';
import type { SegmentCollector } from './extraction.ts';

const BLOCK = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'ul', 'ol', 'table', 'tr', 'td', 'th', 'blockquote']);
const HEADING = /^h[1-6]$/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: '\u00a0' };

function decodeEntity(entity: string, name: string): string {
  if (ENTITIES[name]) return ENTITIES[name];
  const code = name.startsWith('#x') ? parseInt(name.slice(2), 16) : name.startsWith('#') ? parseInt(name.slice(1), 10) : NaN;
  return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
}

/**
 * A DOCX's paragraphs, headings included, each with its number and the heading it falls under.
 * Mammoth turns the document into plain HTML (headings by their style names); each block element
 * (paragraph, heading, list item, table cell) is one paragraph.
 */
export async function readDocx(bytes: Uint8Array, collector: SegmentCollector): Promise<void> {
  const { value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  let paragraph = 0;
  let section: string | undefined;
  let text = '';
  let heading = false;
  const flush = (): boolean => {
    const block = text.trim();
    text = '';
    if (!block) return true;
    if (heading) section = block.replace(/\s+/g, ' ');
    paragraph += 1;
    return collector.add(block, section === undefined ? { paragraph } : { paragraph, section });
  };
  for (const [, closing, tag, content] of html.matchAll(/<(\/?)([a-z0-9]+)[^>]*>|([^<]+)/g)) {
    if (content !== undefined) {
      text += content.replace(/&(#?\w+);/g, decodeEntity);
    } else if (tag === 'br') {
      text += '\n';
    } else if (tag && BLOCK.has(tag)) {
      if (!flush()) return;
      heading = !closing && HEADING.test(tag);
    }
  }
  flush();
}

/** A Word 97-2003 document's body paragraphs, then its footnotes and endnotes (as sections `Footnotes`, `Endnotes`). */
export async function readDoc(bytes: Uint8Array, collector: SegmentCollector): Promise<void> {
  const document = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  let paragraph = 0;
  const parts: Array<[string, string | undefined]> = [
    [document.getBody(), undefined],
    [document.getFootnotes(), 'Footnotes'],
    [document.getEndnotes(), 'Endnotes'],
  ];
  for (const [text, section] of parts) {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      paragraph += 1;
      if (!collector.add(line, section ? { paragraph, section } : { paragraph })) return;
    }
  }
}
