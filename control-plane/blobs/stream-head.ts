/**
 * The first `size` bytes (or all, when shorter) of a stream, to judge its content by, and the
 * whole stream again (those bytes first) for whoever stores it.
 */
export async function splitHead(body: AsyncIterable<Uint8Array>, size: number): Promise<{ head: Uint8Array; all: AsyncIterable<Uint8Array> }> {
  const iterator = body[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let done = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    chunks.push(next.value);
    length += next.value.byteLength;
  }
  const head = Buffer.concat(chunks);
  async function* all(): AsyncIterable<Uint8Array> {
    if (head.byteLength) yield head;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head: head.subarray(0, size), all: all() };
}
