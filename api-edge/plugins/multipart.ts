import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { FileTooLargeError, ValidationError } from '../../control-plane/contracts.ts';

/** Bytes a text field may hold (a document's `metadata` JSON included). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** What a form may carry beside its files: part headers, boundaries, text fields. */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

export interface FormFile {
  field: string;
  filename: string;
  /** As the client declared it; the control plane judges the content itself. */
  contentType: string;
  /** Ends where the file ends; errors when the request is cut short or the file passes the limit. */
  stream: Readable;
}

export interface MultipartOptions {
  /** Parts that carry files; a file under any other name is a 400 naming it. */
  fileFields: readonly string[];
  /** Text fields taken; any other is a 400 naming it. */
  textFields: readonly string[];
  maxFiles: number;
  /** The largest file: busboy stops there, and the upload is refused (413). */
  maxFileBytes: number;
  /**
   * Called for each file in order, with the text fields that came before it. It must read the
   * file to its end; the form goes on only once it has. A rejection ends the form with that error.
   */
  onFile(file: FormFile, fieldsSoFar: ReadonlyMap<string, string>): Promise<void>;
}

/** The Node request under srvx's Request on Node; none on Bun. */
const nodeRequestOf = (request: Request) => (request as Request & { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;

export const isMultipartForm = (request: Request) => /^multipart\/form-data\s*;/i.test(request.headers.get('content-type') ?? '');

/**
 * Reads a `multipart/form-data` body as it arrives, with busboy: text fields are collected, each
 * file is handed to `onFile` as a stream (never held), one after the other. Parsing stops at the
 * first error, the rest of the body unread: the caller answers and closes the connection.
 */
export function readMultipartForm(request: Request, options: MultipartOptions): Promise<{ fields: Map<string, string>; files: number }> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!isMultipartForm(request)) throw ValidationError.field('(body)', 'must be multipart/form-data');
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        // Busboy cuts a file when it reaches this size: one byte more lets a file of exactly the limit through.
        fileSize: options.maxFileBytes + 1,
        // One more than taken, so that the extra file is seen and named (below).
        files: options.maxFiles + 1,
        fields: options.textFields.length,
        fieldSize: MAX_FIELD_BYTES,
        parts: options.maxFiles + 1 + options.textFields.length,
      },
    });
  } catch {
    throw ValidationError.field('(body)', 'must be multipart/form-data with a boundary');
  }
  const nodeRequest = nodeRequestOf(request);
  const source: Readable = nodeRequest ?? (request.body ? Readable.fromWeb(request.body) : Readable.from([]));

  return new Promise((resolve, reject) => {
    const fields = new Map<string, string>();
    let files = 0;
    let failed = false;
    let current: Readable | undefined;
    let pending = Promise.resolve();

    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      source.unpipe(parser);
      current?.destroy(error instanceof Error ? error : new Error(String(error)));
      // A file being stored may still finish (read to its end before the failure): the caller learns of it before the form ends, and can discard it.
      void pending.then(() => reject(error));
    };
    const invalid = (issue: string) => fail(ValidationError.field('(body)', issue));

    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (!options.textFields.includes(name)) return fail(ValidationError.field(name, 'is not a field of this form'));
      if (info.valueTruncated) return fail(ValidationError.field(name, `must be at most ${MAX_FIELD_BYTES} bytes`));
      if (fields.has(name)) return fail(ValidationError.field(name, 'is given more than once'));
      fields.set(name, value);
    });

    parser.on('file', (name, stream, info) => {
      if (failed) return void stream.resume();
      if (files === options.maxFiles) {
        stream.resume();
        return fail(ValidationError.field(name, options.maxFiles === 1 ? 'is given more than once' : `must hold at most ${options.maxFiles} files`));
      }
      if (!options.fileFields.includes(name)) {
        stream.resume();
        return fail(ValidationError.field(name, 'is not a field of this form'));
      }
      const filename = info.filename;
      if (!filename) {
        stream.resume();
        return fail(ValidationError.field(name, 'must name its file (a filename in the part header)'));
      }
      files += 1;
      // The file is destroyed with the form's error when the form fails; whoever reads it sees that error, and nobody else must.
      stream.on('error', () => {});
      // Past the limit busboy drops the rest of the file: the form fails at once, before its end is read.
      stream.once('limit', () => fail(new FileTooLargeError(options.maxFileBytes)));
      const before = new Map(fields);
      pending = pending.then(async () => {
        if (failed) return void stream.resume();
        current = stream;
        try {
          await options.onFile({ field: name, filename, contentType: info.mimeType || 'application/octet-stream', stream }, before);
        } catch (error) {
          fail(error);
        } finally {
          current = undefined;
        }
      });
    });

    parser.on('filesLimit', () => invalid(`must hold at most ${options.maxFiles} file(s)`));
    parser.on('fieldsLimit', () => invalid('holds more fields than the form takes'));
    parser.on('partsLimit', () => invalid('holds more parts than the form takes'));
    parser.on('error', () => invalid('is not a valid multipart/form-data body'));
    parser.on('close', () => {
      void pending.then(() => {
        if (!failed) resolve({ fields, files });
      });
    });
    // A request cut short leaves its file unfinished: the upload then fails instead of waiting.
    source.on('error', () => fail(ValidationError.field('(body)', 'ended before the form was complete')));
    source.on('close', () => {
      if (nodeRequest && !nodeRequest.complete) fail(ValidationError.field('(body)', 'ended before the form was complete'));
    });
    source.pipe(parser);
  });
}
