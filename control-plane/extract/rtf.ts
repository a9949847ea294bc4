import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import iconv from 'iconv-lite';
import { Tokenize } from 'rtf-stream-parser';
import { ToPlainText } from 'rtf-stream-parser/dist/src/ToPlainText.js';
import type { SegmentCollector } from './extraction.ts';

/**
 * The RTF source without its `{\info …}` group: the plain-text converter would print the
 * document's title, author and the like before the body.
 */
export function withoutInfoGroup(rtf: string): string {
  const start = rtf.search(/\{\\info[^a-z]/);
  if (start < 0) return rtf;
  let depth = 0;
  for (let i = start; i < rtf.length; i++) {
    const c = rtf[i];
    if (c === '\\') i += 1;
    else if (c === '{') depth += 1;
    else if (c === '}' && --depth === 0) return rtf.slice(0, start) + rtf.slice(i + 1);
  }
  return rtf.slice(0, start);
}

/** An RTF document's paragraphs (code pages decoded with iconv-lite), numbered from 1. */
export async function readRtf(bytes: Uint8Array, collector: SegmentCollector): Promise<void> {
  // RTF is 7-bit: characters beyond ASCII are escapes, so latin1 maps the bytes one to one.
  const source = withoutInfoGroup(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
  const toText = new ToPlainText({
    decode: (buf, encoding) => iconv.decode(buf, encoding),
    encode: (text, encoding) => iconv.encode(text, encoding),
    outputMode: 'string',
    warn: () => {},
  });
  let text = '';
  toText.on('data', (chunk: string | Buffer) => {
    text += chunk.toString();
  });
  await pipeline(Readable.from([Buffer.from(source, 'latin1')]), new Tokenize(), toText);
  let paragraph = 0;
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    paragraph += 1;
    if (!collector.add(line, { paragraph })) return;
  }
}
