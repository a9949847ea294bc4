/** `Content-Disposition` naming the file: a plain-ASCII fallback and the exact name (RFC 6266, RFC 8187). */
export function attachment(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

type Piece = { file: { filename: string; contentType: string; size: number; sha256: string } } | { base64: string };

/**
 * A download from a subscription that yields the file's description and then its bytes in
 * base64 pieces: an error (404, 403) comes before the first piece and is thrown here, as a JSON
 * answer; the bytes are then streamed as the client reads them.
 */
export async function fileResponse(pieces: AsyncIterable<Piece>): Promise<Response> {
  const iterator = pieces[Symbol.asyncIterator]();
  const first = await iterator.next();
  const file = !first.done && 'file' in first.value ? first.value.file : undefined;
  if (!file) throw new Error('the file download ended before describing the file');
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else if ('base64' in next.value) controller.enqueue(Buffer.from(next.value.base64, 'base64'));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(body, {
    headers: {
      'content-type': file.contentType,
      'content-length': String(file.size),
      'content-disposition': attachment(file.filename),
      etag: `"${file.sha256}"`,
    },
  });
}
