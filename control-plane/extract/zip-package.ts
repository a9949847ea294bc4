import { ExtractionError, type ExtractFormat } from './extraction.ts';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;

/**
 * Refuses a ZIP package (DOCX, XLSX) whose central directory declares more than `maxBytes` of
 * unpacked content, or that needs ZIP64 (over 4 GiB or 65 535 entries), before a reader inflates it
 * whole into memory. A directory that cannot be walked is left for the reader to report.
 */
export function checkUnpackedSize(bytes: Uint8Array, format: ExtractFormat, maxBytes: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tooLarge = () => new ExtractionError(format, undefined, `unpacks to more than ${maxBytes} bytes`);
  // The end record is 22 bytes plus a comment of up to 65 535.
  for (let end = bytes.length - 22; end >= Math.max(0, bytes.length - 22 - 0xffff); end--) {
    if (view.getUint32(end, true) !== END_OF_CENTRAL_DIRECTORY) continue;
    const entries = view.getUint16(end + 10, true);
    const offset = view.getUint32(end + 16, true);
    if (entries === 0xffff || offset === 0xffffffff) throw tooLarge();
    let total = 0;
    for (let at = offset, n = 0; n < entries; n++) {
      if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL_DIRECTORY_ENTRY) return;
      const size = view.getUint32(at + 24, true);
      if (size === 0xffffffff) throw tooLarge();
      total += size;
      if (total > maxBytes) throw tooLarge();
      at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    }
    return;
  }
}
