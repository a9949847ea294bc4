import { crc32, inflateRawSync } from 'node:zlib';
import { ExtractionError, type ExtractFormat, type ExtractionLimits } from './extraction.ts';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
/** General purpose flag bits: 0 encrypted, 11 names in UTF-8 (the only one kept). */
const ENCRYPTED = 0x0001;
const UTF8_NAMES = 0x0800;

interface Unpacked {
  name: Uint8Array;
  flags: number;
  data: Uint8Array;
}

type UnpackLimits = Pick<ExtractionLimits, 'maxUnpackedBytes' | 'maxUnpackRatio' | 'unpackRatioFloorBytes' | 'maxEntries'>;

/**
 * Unpacks a ZIP package (DOCX, XLSX) within the limits, counting the bytes it really inflates to,
 * never the sizes its directory declares: inflation stops as soon as the package passes
 * `maxUnpackedBytes`, or `maxUnpackRatio` times its own size once past `unpackRatioFloorBytes`.
 * Answers the same files packed again without compression, so that the reader (mammoth, exceljs,
 * both on JSZip) inflates nothing more. Throws `ExtractionError` naming the limit, or for a
 * directory that cannot be walked, an encrypted entry or a method other than stored or deflated.
 */
export function unpackZip(bytes: Uint8Array, format: ExtractFormat, limits: UnpackLimits): Uint8Array {
  const files: Unpacked[] = [];
  inflateEntries(bytes, format, limits, (file) => files.push(file));
  return storedZip(files);
}

/**
 * Checks a ZIP package (DOCX, XLSX) against the limits as `unpackZip` would, inflating every entry
 * and counting what it gives, but keeping none of it. Throws what `unpackZip` throws.
 */
export function checkZip(bytes: Uint8Array, format: ExtractFormat, limits: UnpackLimits): void {
  inflateEntries(bytes, format, limits, () => {});
}

function inflateEntries(bytes: Uint8Array, format: ExtractFormat, limits: UnpackLimits, onFile: (file: Unpacked) => void): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const unreadable = () => new ExtractionError(format);
  const tooLarge = () => new ExtractionError(format, undefined, `unpacks to more than ${limits.maxUnpackedBytes} bytes`, limits.maxUnpackedBytes);
  const tooCompressed = () => new ExtractionError(format, undefined, `unpacks to more than ${limits.maxUnpackRatio} times its own size`, limits.maxUnpackRatio);
  const tooMany = () => new ExtractionError(format, undefined, `holds more than ${limits.maxEntries} files`, limits.maxEntries);

  const end = findEndOfDirectory(view);
  if (end === undefined) throw unreadable();
  const declaredEntries = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  // 0xffff entries or offsets mean ZIP64, only needed past 65 535 files or 4 GiB: past the limits.
  if (declaredEntries === 0xffff) throw tooMany();
  if (at === 0xffffffff) throw tooLarge();
  if (declaredEntries > limits.maxEntries) throw tooMany();

  const byRatio = Math.max(limits.unpackRatioFloorBytes, limits.maxUnpackRatio * bytes.length);
  const budget = Math.min(limits.maxUnpackedBytes, byRatio);
  const overBudget = () => (budget === limits.maxUnpackedBytes ? tooLarge() : tooCompressed());
  let total = 0;
  for (let n = 0; n < declaredEntries; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL_DIRECTORY_ENTRY) throw unreadable();
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const compressedSize = view.getUint32(at + 20, true);
    const local = view.getUint32(at + 42, true);
    const nameLength = view.getUint16(at + 28, true);
    const name = bytes.subarray(at + 46, at + 46 + nameLength);
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (compressedSize === 0xffffffff || local === 0xffffffff) throw tooLarge();
    if (flags & ENCRYPTED || (method !== STORED && method !== DEFLATED)) throw unreadable();
    if (local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL_FILE_HEADER) throw unreadable();
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + compressedSize > bytes.length) throw unreadable();
    const packed = bytes.subarray(start, start + compressedSize);
    const left = budget - total;
    let data: Uint8Array;
    if (method === STORED) {
      if (packed.length > left) throw overBudget();
      data = packed;
    } else {
      try {
        // Inflates at most one byte past what is left: enough to know the budget is passed.
        data = inflateRawSync(packed, { maxOutputLength: left + 1 });
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw overBudget();
        throw new ExtractionError(format, error);
      }
      if (data.length > left) throw overBudget();
    }
    total += data.length;
    onFile({ name, flags: flags & UTF8_NAMES, data });
  }
}

/** The offset of the end-of-central-directory record: 22 bytes plus a comment of up to 65 535, searched from the end. */
function findEndOfDirectory(view: DataView): number | undefined {
  for (let end = view.byteLength - 22; end >= Math.max(0, view.byteLength - 22 - 0xffff); end--) {
    if (view.getUint32(end, true) === END_OF_CENTRAL_DIRECTORY) return end;
  }
  return undefined;
}

/** A ZIP package of the files, stored (not compressed), with their true sizes and checksums. */
function storedZip(files: Unpacked[]): Uint8Array {
  const size = files.reduce((sum, f) => sum + 30 + f.name.length + f.data.length + 46 + f.name.length, 22);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const offsets: number[] = [];
  const checksums: number[] = [];
  let at = 0;
  for (const file of files) {
    offsets.push(at);
    const checksum = crc32(file.data);
    checksums.push(checksum);
    view.setUint32(at, LOCAL_FILE_HEADER, true);
    view.setUint16(at + 4, 20, true);
    view.setUint16(at + 6, file.flags, true);
    view.setUint16(at + 8, STORED, true);
    view.setUint32(at + 14, checksum, true);
    view.setUint32(at + 18, file.data.length, true);
    view.setUint32(at + 22, file.data.length, true);
    view.setUint16(at + 26, file.name.length, true);
    out.set(file.name, at + 30);
    out.set(file.data, at + 30 + file.name.length);
    at += 30 + file.name.length + file.data.length;
  }
  const directory = at;
  for (const [i, file] of files.entries()) {
    view.setUint32(at, CENTRAL_DIRECTORY_ENTRY, true);
    view.setUint16(at + 4, 20, true);
    view.setUint16(at + 6, 20, true);
    view.setUint16(at + 8, file.flags, true);
    view.setUint16(at + 10, STORED, true);
    view.setUint32(at + 16, checksums[i]!, true);
    view.setUint32(at + 20, file.data.length, true);
    view.setUint32(at + 24, file.data.length, true);
    view.setUint16(at + 28, file.name.length, true);
    view.setUint32(at + 42, offsets[i]!, true);
    out.set(file.name, at + 46);
    at += 46 + file.name.length;
  }
  view.setUint32(at, END_OF_CENTRAL_DIRECTORY, true);
  view.setUint16(at + 8, files.length, true);
  view.setUint16(at + 10, files.length, true);
  view.setUint32(at + 12, at - directory, true);
  view.setUint32(at + 16, directory, true);
  return out;
}
