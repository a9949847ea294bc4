import type { Readable } from 'node:stream';
import { z } from 'zod';

/**
 * What describes a streamed body (`ControlPlane.upload`). Over HTTP the body is the request's own
 * (application/octet-stream), so this travels beside it in the `x-upload-meta` header as
 * percent-encoded JSON; the control plane validates it like an input.
 */
export const UploadMetaSchema = z
  .object({
    filename: z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters'),
    contentType: z
      .string({ error: 'is required' })
      .max(255, 'must be at most 255 characters')
      .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/plain'),
  })
  .strict();
export type UploadMeta = z.infer<typeof UploadMetaSchema>;

export const UPLOAD_META_HEADER = 'x-upload-meta';

export const encodeUploadMeta = (meta: unknown) => encodeURIComponent(JSON.stringify(meta));

/** The header's value as sent; `undefined` when it is no percent-encoded JSON (the schema then names what is missing). */
export function decodeUploadMeta(value: string | null | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(decodeURIComponent(value));
  } catch {
    return undefined;
  }
}

/**
 * A Node stream as a byte stream that reads only as fast as it is consumed (the stream is paused
 * while a chunk waits). Cancelling detaches from the source and calls `onCancel`, which decides
 * what becomes of the rest of it.
 */
export function nodeByteStream(source: Readable, onCancel: () => void = () => {}): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const detach = () => {
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('error', onError);
  };
  const onData = (chunk: Buffer | string) => {
    controller.enqueue(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if ((controller.desiredSize ?? 0) <= 0) source.pause();
  };
  const onEnd = () => {
    detach();
    controller.close();
  };
  const onError = (error: unknown) => {
    detach();
    controller.error(error);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        source.on('data', onData);
        source.on('end', onEnd);
        source.on('error', onError);
      },
      pull() {
        source.resume();
      },
      cancel() {
        detach();
        source.pause();
        onCancel();
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The caller's body as a byte stream that a procedure may stop reading without cancelling the
 * source: the caller owns it (an HTTP request whose rest it drains, say; cancelling a web stream
 * adapter mid-upload can crash Node 20).
 */
export function detachedByteStream(source: ReadableStream<Uint8Array> | Readable): ReadableStream<Uint8Array> {
  if (!(source instanceof ReadableStream)) return nodeByteStream(source);
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel() {
        reader.releaseLock();
      },
    },
    { highWaterMark: 0 },
  );
}
