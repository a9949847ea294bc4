import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type Tesseract from 'tesseract.js';

/** The OCR engine itself failed (its worker did not start): a fault of the server, not of the image. */
export class OcrUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the OCR engine did not start', { cause });
    this.name = 'OcrUnavailableError';
  }
}

/** Text recognition in images. */
export interface OcrEngine {
  recognize(image: Uint8Array): Promise<string>;
  /** Ends the engine's worker; idempotent. */
  close(): Promise<void>;
}

/**
 * The English LSTM model (integer "best" weights) shipped in `@tesseract.js-data/eng`: read from
 * disk, never fetched.
 */
export function englishLanguagePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@tesseract.js-data/eng')), '4.0.0_best_int');
}

/**
 * Tesseract (WebAssembly, in a worker thread) with English. The worker starts on the first image
 * and serves every later one; it loads its core from node_modules and its language data from
 * `langPath`, with no cache written (`cacheMethod: 'none'`), so it needs no network.
 */
export function createTesseractEngine({ langPath = englishLanguagePath() }: { langPath?: string } = {}): OcrEngine {
  let worker: Promise<Tesseract.Worker> | undefined;
  const start = async () => {
    const { default: tesseract } = await import('tesseract.js');
    return tesseract.createWorker('eng', tesseract.OEM.LSTM_ONLY, {
      langPath,
      gzip: true,
      cachePath: tmpdir(),
      cacheMethod: 'none',
      // Without a handler, tesseract.js throws a failed job's error out of its message listener,
      // which ends the process; the job's promise rejects with it either way.
      errorHandler: () => {},
    });
  };
  return {
    async recognize(image) {
      worker ??= start().catch((error: unknown) => {
        worker = undefined;
        throw new OcrUnavailableError(error);
      });
      const { data } = await (await worker).recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
      return data.text;
    },
    async close() {
      const running = worker;
      worker = undefined;
      if (running) await (await running.catch(() => undefined))?.terminate();
    },
  };
}
