import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { ValidationError } from '../errors.ts';
import {
  DEFAULT_EXTRACTION_LIMITS,
  ExtractionError,
  SegmentCollector,
  type Extraction,
  type ExtractionLimits,
  type ExtractFormat,
  type ExtractInput,
} from './extraction.ts';
import { createTesseractEngine, OcrUnavailableError, type OcrEngine } from './ocr.ts';
import { errorOf, type ImageToRecognize, type ReaderJob, type ReaderMessage } from './read-document.ts';

export {
  DEFAULT_EXTRACTION_LIMITS,
  EXTRACTION_HEAP_MB,
  EXTRACTION_TIMEOUT_MS,
  ExtractionError,
  MAX_UNPACK_RATIO,
  MAX_UNPACKED_BYTES,
  MAX_ZIP_ENTRIES,
  UNPACK_RATIO_FLOOR_BYTES,
} from './extraction.ts';
export type { Extraction, ExtractionLimits, ExtractFormat, ExtractInput, Segment, SegmentPosition } from './extraction.ts';
export { ACCEPTED_CONTENT_TYPES } from './detect.ts';
export type { OcrEngine } from './ocr.ts';

/** How long a reading thread may take to start on a document (a new one loads the readers first). */
const READER_START_MS = 60_000;

/** Documents read at once by one extractor: each may hold up to `maxHeapMb` of memory, the rest wait their turn. */
export const EXTRACTION_CONCURRENCY = 2;

/** Reads a document's text, segment by segment, each with where it came from. */
export interface Extractor {
  /**
   * The file's text and segments. Throws `UnsupportedFileTypeError` for a format it does not read
   * and `ExtractionError` for a file of a known format whose content cannot be read.
   */
  extract(input: ExtractInput): Promise<Extraction>;
  /**
   * Checks the file within the same limits without reading its text, on a reading thread: a DOCX
   * or XLSX is inflated, counting what its entries really give; a PDF's page tree is walked to the
   * pages a reading would read. Answers the format; throws the `ExtractionError` a reading would
   * throw for a file past a limit (time, heap, what a package unpacks to) or a package that is not a ZIP.
   */
  check(input: ExtractInput): Promise<ExtractFormat>;
  /** Ends the OCR worker, if one started; later calls to `extract` fail. Idempotent. */
  close(): Promise<void>;
}

export interface ExtractorOptions {
  limits?: Partial<ExtractionLimits>;
  /** Documents read at once; default `EXTRACTION_CONCURRENCY`. */
  concurrency?: number;
  /** Defaults to Tesseract with the English model shipped in node_modules, started on the first image. */
  ocr?: OcrEngine;
}

/**
 * The platform's document text extractor: PDF (unpdf), DOCX (mammoth), DOC (word-extractor),
 * XLSX (exceljs), XLS (SheetJS), CSV (csv-parse), RTF (rtf-stream-parser), plain text, Markdown,
 * and images by OCR (tesseract.js). Pure machinery: bytes in, text out; no I/O but reading
 * `input.path`. Each document is read on a thread of its own within `limits` (time, heap, what a
 * ZIP package unpacks to), so a hostile file is stopped without harm to the process; at most
 * `concurrency` at once. Create one per process and `close()` it on shutdown.
 */
export function createExtractor(options: ExtractorOptions = {}): Extractor {
  const limits: ExtractionLimits = { ...DEFAULT_EXTRACTION_LIMITS, ...options.limits };
  const ocr = options.ocr ?? createTesseractEngine();
  const pool = createReaderPool(limits, options.concurrency ?? EXTRACTION_CONCURRENCY);
  const recognize = timedOcr(ocr, limits.timeoutMs);
  let closed = false;

  return {
    async extract(input) {
      if (closed) throw new Error('the extractor is closed');
      const bytes = input.bytes ?? new Uint8Array(await readFile(input.path));
      const read = await pool.read(bytes, input.filename, input.owner);
      if (read.format !== 'image') return read;
      const collector = new SegmentCollector(limits.maxTextBytes);
      try {
        collector.add(await recognize(bytes), { page: 1 });
      } catch (error) {
        if (error instanceof OcrUnavailableError || error instanceof ExtractionError) throw error;
        throw new ExtractionError('image', error);
      }
      const { segments, truncated } = collector;
      return { format: 'image', contentType: read.contentType, text: segments.map((s) => s.text).join('\n\n'), segments, pages: 1, truncated };
    },
    async check(input) {
      if (closed) throw new Error('the extractor is closed');
      const bytes = input.bytes ?? new Uint8Array(await readFile(input.path));
      return pool.check(bytes, input.filename, input.owner);
    },
    async close() {
      closed = true;
      await pool.close();
      await ocr.close();
    },
  };
}

/**
 * The engine's recognition one image at a time, each within `timeoutMs` from its turn: past it the
 * engine is closed (its worker ended; the next image starts a new one) and the image refused with
 * an `ExtractionError` naming the limit, as a reading past the time limit is.
 */
function timedOcr(ocr: OcrEngine, timeoutMs: number): (image: Uint8Array) => Promise<string> {
  let turn: Promise<unknown> = Promise.resolve();
  return (image) => {
    const recognized = turn.then(
      () =>
        new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => {
            void ocr.close();
            reject(new ExtractionError('image', undefined, `took longer than ${timeoutMs / 1000} s to read`, timeoutMs));
          }, timeoutMs);
          ocr.recognize(image).then(resolve, reject).finally(() => clearTimeout(timer));
        }),
    );
    turn = recognized.catch(() => {});
    return recognized;
  };
}

/** A limit the reading passed, for the file's format when it was known by then. */
function limitError(format: ExtractFormat | undefined, issue: string, limit: number): ValidationError {
  return format ? new ExtractionError(format, undefined, issue, limit) : new ValidationError(`file ${issue}`, { field: 'file', issue, limit });
}

/**
 * Up to `size` worker threads (extract.worker.mjs) that read one document at a time each, with a
 * heap of `limits.maxHeapMb`; a document waits for a free one. A reading that passes
 * `limits.timeoutMs` (from when its thread starts on it) or the heap has its thread ended, and the
 * caller gets an error naming the limit, while the process and its other readings go on; a new
 * thread takes its place on demand. One owner (a tenant) holds at most all threads but one, so that
 * its files, however slow, leave a thread to the others (a reading no owner is named for has no
 * such bound); a freed thread goes to the longest-waiting document whose owner may take it. Idle
 * threads do not keep the process alive.
 */
function createReaderPool(limits: ExtractionLimits, size: number) {
  const idle: Worker[] = [];
  const waiting: Array<{ owner: string | undefined; start: (worker: Worker) => void }> = [];
  const held = new Map<string, number>();
  const perOwner = Math.max(1, size - 1);
  let threads = 0;
  let next = 0;

  const free = () => idle.length > 0 || threads < size;
  const mayTake = (owner: string | undefined) => owner === undefined || (held.get(owner) ?? 0) < perOwner;
  function take(owner: string | undefined): Worker {
    if (owner !== undefined) held.set(owner, (held.get(owner) ?? 0) + 1);
    const reused = idle.pop();
    if (reused) return reused;
    threads += 1;
    return new Worker(new URL('./extract.worker.mjs', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb } });
  }
  function acquire(owner: string | undefined): Promise<Worker> {
    if (free() && mayTake(owner)) return Promise.resolve(take(owner));
    return new Promise((start) => waiting.push({ owner, start }));
  }
  function release(worker: Worker, healthy: boolean, owner: string | undefined): void {
    if (owner !== undefined) {
      const left = (held.get(owner) ?? 1) - 1;
      if (left > 0) held.set(owner, left);
      else held.delete(owner);
    }
    if (healthy) {
      worker.unref();
      idle.push(worker);
    } else {
      threads -= 1;
      void worker.terminate();
    }
    while (free()) {
      const index = waiting.findIndex((waiter) => mayTake(waiter.owner));
      if (index < 0) break;
      const [waiter] = waiting.splice(index, 1);
      waiter!.start(take(waiter!.owner));
    }
  }

  /** Runs one job on a free thread: a reading, or (`check`) a check of the file's package. */
  async function run(bytes: Uint8Array, filename: string, owner: string | undefined, check: boolean): Promise<Extraction | ImageToRecognize | ExtractFormat> {
    const worker = await acquire(owner);
    worker.ref();
    const id = next++;
    // A copy of the view alone (not the buffer it may share), handed over rather than cloned.
    const own = new Uint8Array(bytes);
    return new Promise((resolve, reject) => {
      let format: ExtractFormat | undefined;
      let settled = false;
      const settle = (healthy: boolean, outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        release(worker, healthy, owner);
        outcome();
      };
      const tooLong = () => settle(false, () => reject(limitError(format, `took longer than ${limits.timeoutMs / 1000} s to read`, limits.timeoutMs)));
      // Counted from when the thread starts on the document: a new thread first loads the readers.
      let timer = setTimeout(
        () => settle(false, () => reject(new Error(`the document's reading thread did not start within ${READER_START_MS / 1000} s`))),
        READER_START_MS,
      );
      const onMessage = (message: ReaderMessage) => {
        if (message.id !== id) return;
        if ('started' in message) {
          clearTimeout(timer);
          timer = setTimeout(tooLong, limits.timeoutMs);
        } else if ('format' in message) format = message.format;
        else if ('result' in message) settle(true, () => resolve(message.result));
        else if ('checked' in message) settle(true, () => resolve(message.checked));
        else settle(true, () => reject(errorOf(message.error)));
      };
      const onError = (error: Error & { code?: string }) =>
        settle(false, () =>
          reject(
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? limitError(format, `needs more than ${limits.maxHeapMb} MiB of memory to read`, limits.maxHeapMb)
              : format
                ? new ExtractionError(format, error)
                : error,
          ),
        );
      const onExit = (code: number) => settle(false, () => reject(new Error(`the document's reading thread ended early (exit code ${code})`)));
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ id, bytes: own, filename, limits, check } satisfies ReaderJob, [own.buffer]);
    });
  }

  return {
    read: (bytes: Uint8Array, filename: string, owner: string | undefined) => run(bytes, filename, owner, false) as Promise<Extraction | ImageToRecognize>,
    check: (bytes: Uint8Array, filename: string, owner: string | undefined) => run(bytes, filename, owner, true) as Promise<ExtractFormat>,
    /** Ends the idle threads; a reading under way ends its own when done. */
    async close(): Promise<void> {
      const ending = idle.splice(0);
      threads -= ending.length;
      await Promise.all(ending.map((worker) => worker.terminate()));
    },
  };
}
