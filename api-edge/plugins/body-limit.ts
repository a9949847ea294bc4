import { PayloadTooLargeError, ValidationError } from '../../control-plane/contracts.ts';

/** The largest request body the REST APIs read: every v3 and v4 body is a JSON document. */
export const MAX_BODY_BYTES = 1_048_576;

/** Methods whose requests may carry a body. */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Requests whose chunked body went over the limit: their body was dropped unread past it. */
const overLimit = new WeakSet<Request>();

/** `to`, carrying the client address the server put on `from` (the anonymous rate-limit key). */
function withAddressOf(from: Request, to: Request): Request {
  const descriptor = Object.getOwnPropertyDescriptor(from, 'ip') ?? { value: (from as Request & { ip?: string }).ip };
  Object.defineProperty(to, 'ip', { ...descriptor, configurable: true });
  return to;
}

/**
 * The request with its chunked body read into memory, up to MAX_BODY_BYTES. Past the limit it
 * stops reading and returns the request without a body, marked for `assertBodyWithinLimit`, so
 * the refusal comes after authentication and rate limiting, like every other answer.
 */
export async function withMeasuredBody(request: Request): Promise<Request> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      const refused = new Request(request.url, { method: request.method, headers: request.headers, signal: request.signal });
      overLimit.add(refused);
      return withAddressOf(request, refused);
    }
    chunks.push(value);
  }
  return withAddressOf(request, new Request(request.url, { method: request.method, headers: request.headers, body: Buffer.concat(chunks), signal: request.signal }));
}

/** Throws PAYLOAD_TOO_LARGE (413) for a body declared or found larger than MAX_BODY_BYTES. */
export function assertBodyWithinLimit(request: Request): void {
  if (overLimit.has(request) || Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
}

const JSON_MEDIA_TYPE_ISSUE = 'must be JSON sent with Content-Type: application/json';

/**
 * Refuses a body sent as anything but `application/json` (parameters such as `charset` aside):
 * the APIs read JSON only, and the server would otherwise read such a body as none, so a request
 * would run on its defaults (a dry run becoming a real one).
 */
export function assertJsonBody(request: Request): void {
  if (!BODY_METHODS.has(request.method)) return;
  const hasBody = Number(request.headers.get('content-length') ?? 0) > 0 || request.headers.has('transfer-encoding');
  if (!hasBody) return;
  const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (mediaType !== 'application/json') throw ValidationError.field('(body)', JSON_MEDIA_TYPE_ISSUE);
}
