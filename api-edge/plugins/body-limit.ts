import { PayloadTooLargeError, ValidationError } from '../../control-plane/contracts.ts';
import { publicRouteOf } from './public-routes.ts';
import { V3_BASE } from '../routes/bases.ts';

/** The largest request body the REST APIs read: every v3 and v4 body is a JSON document. */
export const MAX_BODY_BYTES = 1_048_576;

/** Methods whose requests may carry a body. */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Requests whose chunked body went over the limit: their body was dropped unread past it. */
const overLimit = new WeakSet<Request>();

/** A file upload (`POST /v4/data/resources/{tenantId}/{objectType}/{id}/files/{property}`): streamed to its procedure, which sets its limits. */
const STREAMED_UPLOAD = /^\/v4\/data\/resources\/[^/]+\/[^/]+\/[^/]+\/files\/[^/]+\/?$/;
/** Document uploads (v3 `POST /documents`, v4 `POST /v4/data/documents/upload|classify`): multipart forms whose files are streamed. */
const DOCUMENT_UPLOAD = new RegExp(`^(?:${V3_BASE}/documents|/v4/data/documents/(?:upload|classify))/?$`);

/** Whether a POST to `pathname` uploads documents (a form with files, limited per tenant on its own budget). */
export const isDocumentUpload = (pathname: string) => DOCUMENT_UPLOAD.test(pathname);

/**
 * Whether the request's body is streamed to its procedure rather than a JSON document: a file, or
 * an inbound webhook delivery, whose exact bytes its signature covers and whose endpoint sets its limit.
 */
export function isStreamedUpload(request: Request): boolean {
  if (request.method !== 'POST') return false;
  const { pathname } = new URL(request.url);
  return STREAMED_UPLOAD.test(pathname) || isDocumentUpload(pathname) || publicRouteOf(request.method, pathname) === 'webhook-delivery';
}

/** Whether the request sends a JSON body of undeclared length (chunked), which must be read to be measured. */
export function hasUnmeasuredBody(request: Request): boolean {
  return BODY_METHODS.has(request.method) && !request.headers.has('content-length') && request.headers.has('transfer-encoding') && !isStreamedUpload(request);
}

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
