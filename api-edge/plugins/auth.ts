import { parse as parseCookies } from 'cookie';
import type { CallContext, Identity } from '../../control-plane/contracts.ts';
import { ForbiddenError, UnauthorizedError } from '../../control-plane/contracts.ts';

/** Verifies a bearer token and returns who holds it; throws on any invalid token. */
export type VerifyToken = (token: string) => Promise<Identity>;

/** Resolves a browser session id to the access token the session keeps server-side. */
export type SessionTokenLookup = (sessionId: string) => Promise<string | undefined>;

export const SESSION_COOKIE = 'svc_session';
export const CSRF_COOKIE = 'svc_csrf';
export const CSRF_HEADER = 'x-csrf-token';

const BEARER = /^Bearer\s+(\S+)$/i;
/** A session id as the sessions service issues them: 32 random bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** Whether a cookie value has the form of a session id; any other is no session at all (401, not 400). */
export const isSessionId = (value: string) => SESSION_ID.test(value);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates a request: `Authorization: Bearer <JWT>`, or else the backend-for-frontend
 * session cookie. A cookie-authenticated request that changes state must echo the CSRF cookie in
 * `X-CSRF-Token` (double submit), which another site cannot read. 401 when nothing valid is sent.
 */
export async function authenticate(
  request: { method: string; headers: Headers },
  verifyToken: VerifyToken,
  sessionToken?: SessionTokenLookup,
): Promise<CallContext & { identity: Identity }> {
  const { headers } = request;
  const authorization = headers.get('authorization');
  let token: string | undefined;
  if (authorization) {
    token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthorizedError('malformed Authorization header');
  } else if (sessionToken) {
    const cookies = parseCookies(headers.get('cookie') ?? '');
    const sessionId = cookies[SESSION_COOKIE];
    if (sessionId && isSessionId(sessionId)) {
      token = await sessionToken(sessionId);
      if (token && !SAFE_METHODS.has(request.method)) {
        const csrf = cookies[CSRF_COOKIE];
        if (!csrf || headers.get(CSRF_HEADER) !== csrf) throw new ForbiddenError('missing or invalid CSRF token');
      }
    }
  }
  if (!token) throw new UnauthorizedError('authentication required');
  let identity: Identity;
  try {
    identity = await verifyToken(token);
  } catch {
    throw new UnauthorizedError('invalid or expired token');
  }
  // An empty header names no tenant, as over the HTTP link, where it is not forwarded.
  return { identity, token, tenantHint: headers.get('x-tenant-id') || undefined };
}
