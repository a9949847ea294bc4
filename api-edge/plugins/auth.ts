import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies, serialize, type SerializeOptions } from 'cookie';
import type { CallContext, Identity } from '../../control-plane/contracts.ts';
import { ForbiddenError, UnauthorizedError } from '../../control-plane/contracts.ts';

/** Verifies a bearer token and returns who holds it; throws on any invalid token. */
export type VerifyToken = (token: string) => Promise<Identity>;

/** Resolves a browser session id to the access token the session keeps server-side. */
export type SessionTokenLookup = (sessionId: string) => Promise<string | undefined>;

/** The backend-for-frontend's session cookies, as the edge reads them on each request. */
export interface BrowserSessions {
  /** The access token a session keeps server-side. */
  token: SessionTokenLookup;
  /** The sign-in key (`SIGN_IN_KEY`) every edge instance shares; CSRF tokens are derived from it. */
  signInKey: Uint8Array;
  /** The public URL, read at each request (the edge may learn it only once it listens). */
  publicUrl(): string;
  /** The cookies are `__Host-` cookies whatever the public URL's scheme (production); see {@link bffCookieName}. */
  alwaysSecure?: boolean;
}

/** The session cookie's name on plain http; see {@link bffCookieName}. */
export const SESSION_COOKIE = 'svc_session';
export const CSRF_COOKIE = 'svc_csrf';
export const SIGN_IN_COOKIE = 'svc_auth_tx';
export const CSRF_HEADER = 'x-csrf-token';

type BffCookie = typeof SESSION_COOKIE | typeof CSRF_COOKIE | typeof SIGN_IN_COOKIE;

const isHttps = (publicUrl: string) => publicUrl.startsWith('https:');

/**
 * A cookie's name for the public URL: `__Host-<name>` when it is https or `alwaysSecure` is set
 * (production), so that the browser keeps it to this host (Secure, `Path=/`, no `Domain`), sends it
 * only over https, and a sibling subdomain cannot set or replace it; the plain name on http in local
 * development, where browsers refuse Secure cookies but on loopback.
 */
export function bffCookieName(publicUrl: string, name: BffCookie, alwaysSecure = false): string {
  return alwaysSecure || isHttps(publicUrl) ? `__Host-${name}` : name;
}

/** A `Set-Cookie` value of the backend-for-frontend: `Path=/`, no `Domain`, Secure and `__Host-` on https or with `alwaysSecure`. */
export function bffCookie(
  publicUrl: string,
  name: BffCookie,
  value: string,
  attributes: Pick<SerializeOptions, 'httpOnly' | 'sameSite' | 'maxAge'>,
  alwaysSecure = false,
): string {
  return serialize(bffCookieName(publicUrl, name, alwaysSecure), value, { sameSite: 'lax', ...attributes, path: '/', secure: alwaysSecure || isHttps(publicUrl) });
}

const csrfKeys = new WeakMap<Uint8Array, Buffer>();
/** A key of its own for CSRF tokens, derived from the sign-in key (which also encrypts the sign-in cookie). */
function csrfKey(signInKey: Uint8Array): Buffer {
  let key = csrfKeys.get(signInKey);
  if (!key) csrfKeys.set(signInKey, (key = Buffer.from(hkdfSync('sha256', signInKey, new Uint8Array(0), 'svc bff csrf token', 32))));
  return key;
}

/** The CSRF token of a session: an HMAC of its id, so it is valid for that session alone. */
export function csrfTokenFor(signInKey: Uint8Array, sessionId: string): string {
  return createHmac('sha256', csrfKey(signInKey)).update(sessionId).digest('base64url');
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function isCsrfTokenOf(signInKey: Uint8Array, sessionId: string, sent: string | null | undefined): boolean {
  if (!sent) return false;
  const expected = Buffer.from(csrfTokenFor(signInKey, sessionId));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The session id a request's cookies name, if it has the form of one. */
export function sessionIdOf(headers: Headers, publicUrl: string, alwaysSecure = false): string | undefined {
  const value = parseCookies(headers.get('cookie') ?? '')[bffCookieName(publicUrl, SESSION_COOKIE, alwaysSecure)];
  return value && isSessionId(value) ? value : undefined;
}

const BEARER = /^Bearer\s+(\S+)$/i;
/** A session id as the sessions service issues them: 32 random bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** Whether a cookie value has the form of a session id; any other is no session at all (401, not 400). */
export const isSessionId = (value: string) => SESSION_ID.test(value);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates a request: `Authorization: Bearer <JWT>`, or else the backend-for-frontend
 * session cookie. A cookie-authenticated request that changes state must send the session's CSRF
 * token (from the readable CSRF cookie, which another site cannot read) in `X-CSRF-Token`; the
 * token is an HMAC of the session id, so one planted in the cookie jar or taken from another
 * session is refused (403). 401 when nothing valid is sent.
 */
export async function authenticate(
  request: { method: string; headers: Headers },
  verifyToken: VerifyToken,
  sessions?: BrowserSessions,
): Promise<CallContext & { identity: Identity }> {
  const { headers } = request;
  const authorization = headers.get('authorization');
  let token: string | undefined;
  if (authorization) {
    token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthorizedError('malformed Authorization header');
  } else if (sessions) {
    const sessionId = sessionIdOf(headers, sessions.publicUrl(), sessions.alwaysSecure);
    if (sessionId) {
      token = await sessions.token(sessionId);
      if (token && !SAFE_METHODS.has(request.method) && !isCsrfTokenOf(sessions.signInKey, sessionId, headers.get(CSRF_HEADER))) {
        throw new ForbiddenError('missing or invalid CSRF token');
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
