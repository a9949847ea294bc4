import { createRequire } from 'node:module';
import { GifReader } from 'omggif';
import { ExtractionError, type ExtractionLimits } from './extraction.ts';

const require = createRequire(import.meta.url);

/** The chunk parser and the buffer reader that `PNG.sync.read` of pngjs runs, driven here only as far as the IHDR chunk. */
interface PngParser {
  start(): void;
}
type PngParserClass = new (
  options: { checkCRC?: boolean },
  dependencies: { read(length: number, callback: (data: Buffer) => void): void; error(error: Error): void; metadata(metadata: { width: number; height: number }): void },
) => PngParser;
interface SyncReader {
  read(length: number, callback: (data: Buffer) => void): void;
  process(): void;
}
const PngParser = require('pngjs/lib/parser.js') as PngParserClass;
const SyncReader = require('pngjs/lib/sync-reader.js') as new (buffer: Buffer) => SyncReader;

/** Thrown from the metadata callback to stop the parser before any pixel data. */
class HeaderRead extends Error {}

/** A PNG's dimensions from its IHDR chunk (checked against its CRC), inflating nothing. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const reader = new SyncReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  let size: { width: number; height: number } | undefined;
  let failure: Error | undefined;
  const parser = new PngParser(
    { checkCRC: true },
    {
      read: (length, callback) => reader.read(length, callback),
      error: (error) => (failure = error),
      metadata: ({ width, height }) => {
        size = { width, height };
        throw new HeaderRead();
      },
    },
  );
  try {
    parser.start();
    reader.process();
  } catch (error) {
    if (!(error instanceof HeaderRead)) throw error;
  }
  if (!size) throw failure ?? new Error('no IHDR chunk');
  return size;
}

/** The largest pixel count a GIF asks a reader for: its logical screen's, or a larger frame's (omggif reads the block structure, decoding no frame). */
function gifSize(bytes: Uint8Array): { width: number; height: number } {
  const gif = new GifReader(bytes);
  let largest = { width: gif.width, height: gif.height };
  for (let frame = 0; frame < gif.numFrames(); frame++) {
    const { width, height } = gif.frameInfo(frame);
    if (width * height > largest.width * largest.height) largest = { width, height };
  }
  return largest;
}

/**
 * Refuses an image whose header declares more than `limits.maxImagePixels` pixels, before anything
 * decodes it: OCR holds a decoded image in memory several times over. PNG (pngjs's chunk parser,
 * up to IHDR) and GIF (omggif, the screen and every frame) are read; other formats pass unchecked.
 * Throws `ExtractionError` naming the limit, or for a PNG or GIF whose header cannot be read.
 */
export function checkImageSize(bytes: Uint8Array, contentType: string, limits: Pick<ExtractionLimits, 'maxImagePixels'>): void {
  const read = contentType === 'image/png' ? pngSize : contentType === 'image/gif' ? gifSize : undefined;
  if (!read) return;
  let size: { width: number; height: number };
  try {
    size = read(bytes);
  } catch (error) {
    throw new ExtractionError('image', error);
  }
  if (size.width * size.height > limits.maxImagePixels) {
    throw new ExtractionError('image', undefined, `has more than ${limits.maxImagePixels} pixels (${size.width} x ${size.height})`, limits.maxImagePixels);
  }
}
