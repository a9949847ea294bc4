import { parse as parseCookies } from 'cookie';
import { Elysia } from 'elysia';
import { EncryptJWT, jwtDecrypt } from 'jose';
import * as oidc from 'openid-client';
import type { ControlPlane } from '../../control-plane/contracts.ts';
import { ForbiddenError, UnauthorizedError, ValidationError } from '../../control-plane/contracts.ts';
import {
  bffCookie,
  bffCookieName,
  CSRF_COOKIE,
  CSRF_HEADER,
  csrfTokenFor,
  isCsrfTokenOf,
  SESSION_COOKIE,
  sessionIdOf,
  SIGN_IN_COOKIE,
  type VerifyToken,
} from '../plugins/auth.ts';

/** Read at each request: the edge may learn its public origin only once it listens. */
export interface BffOptions {
  /** Origin the browser uses; the callback is `<publicUrl>/auth/callback`. */
  publicUrl: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scope: string;
  /** 32 bytes that encrypt the short-lived sign-in cookie and key the CSRF tokens; shared by every edge instance. */
  secret: Uint8Array;
  /** `__Host-` cookies whatever the public URL's scheme (production). */
  alwaysSecure?: boolean;
}

const TX_TTL_SECONDS = 600;

const THIS_ORIGIN = new URL('http://platform.invalid');

/**
 * Only a path on this origin may be returned to after sign-in (no open redirects). Control
 * characters and backslashes are refused outright: browsers drop tabs and newlines from a URL and
 * read a backslash as `/`, so `/<tab>/evil.example` would leave the site.
 */
function safeReturnTo(value: string | null): string {
  // eslint-disable-next-line no-control-regex -- refuses control characters in a redirect path
  if (!value?.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(value)) return '/';
  const url = new URL(value, THIS_ORIGIN);
  // Dot segments can fold into a leading `//` (`/.//evil.example`), which a browser reads as another host.
  if (url.origin !== THIS_ORIGIN.origin || url.pathname.startsWith('//')) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}

/**
 * Backend-for-frontend sign-in: `/auth/login` starts an authorization-code flow with PKCE,
 * `/auth/callback` exchanges the code on the server and opens a server-side session (HttpOnly
 * cookie) with its CSRF token in a readable cookie, `/auth/logout` ends it. The browser never
 * holds a token. On an https public URL, and in production on any, the cookies are `__Host-` cookies (see `bffCookieName`).
 */
export function bffRoutes(cp: ControlPlane, verifyToken: VerifyToken, options: BffOptions) {
  const callbackUrl = () => `${options.publicUrl}/auth/callback`;
  let config: Promise<oidc.Configuration> | undefined;
  const discover = () =>
    (config ??= oidc
      .discovery(new URL(options.issuer), options.clientId, options.clientSecret, options.clientSecret ? undefined : oidc.None(), {
        execute: options.issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
      })
      .catch((error) => {
        config = undefined;
        throw error;
      }));
  const cookie = (name: Parameters<typeof bffCookie>[1], value: string, attributes: Parameters<typeof bffCookie>[3]) => bffCookie(options.publicUrl, name, value, attributes, options.alwaysSecure);

  return new Elysia({ name: 'bff-auth' })
    .get('/auth/login', async ({ request, set }) => {
      const returnTo = safeReturnTo(new URL(request.url).searchParams.get('returnTo'));
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const pending = await new EncryptJWT({ codeVerifier, state, returnTo })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setExpirationTime(`${TX_TTL_SECONDS}s`)
        .encrypt(options.secret);
      const authorizationUrl = oidc.buildAuthorizationUrl(await discover(), {
        redirect_uri: callbackUrl(),
        scope: options.scope,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
      });
      set.status = 302;
      set.headers.location = authorizationUrl.href;
      set.headers['set-cookie'] = cookie(SIGN_IN_COOKIE, pending, { httpOnly: true, maxAge: TX_TTL_SECONDS });
    })
    .get('/auth/callback', async ({ request, set }) => {
      const encrypted = parseCookies(request.headers.get('cookie') ?? '')[bffCookieName(options.publicUrl, SIGN_IN_COOKIE, options.alwaysSecure)];
      if (!encrypted) throw new ValidationError('no sign-in in progress', { field: 'state', issue: 'no sign-in in progress' });
      let pending: { codeVerifier: string; state: string; returnTo: string };
      try {
        pending = (await jwtDecrypt(encrypted, options.secret)).payload as typeof pending;
      } catch {
        throw new ValidationError('sign-in expired; start again', { field: 'state', issue: 'expired or invalid' });
      }
      const url = new URL(request.url);
      let tokens: oidc.TokenEndpointResponse;
      try {
        tokens = await oidc.authorizationCodeGrant(await discover(), new URL(`${callbackUrl()}${url.search}`), {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
        });
      } catch {
        throw new UnauthorizedError('sign-in failed');
      }
      const identity = await verifyToken(tokens.access_token);
      const expiresAt = Math.floor(Date.now() / 1000) + (tokens.expires_in ?? 3600);
      const { sessionId } = await cp.mutation({ identity, token: tokens.access_token }, 'sessions', 'create', {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        idToken: tokens.id_token,
        expiresAt,
      });
      // Signing in again replaces the session this browser had, which would otherwise live on unused.
      const previous = sessionIdOf(request.headers, options.publicUrl, options.alwaysSecure);
      if (previous) await cp.mutation({ identity: null }, 'sessions', 'delete', { sessionId: previous });
      const maxAge = expiresAt - Math.floor(Date.now() / 1000);
      set.status = 302;
      set.headers.location = pending.returnTo;
      set.headers['set-cookie'] = [
        cookie(SESSION_COOKIE, sessionId, { httpOnly: true, maxAge }),
        cookie(CSRF_COOKIE, csrfTokenFor(options.secret, sessionId), { sameSite: 'strict', maxAge }),
        cookie(SIGN_IN_COOKIE, '', { httpOnly: true, maxAge: 0 }),
      ];
    })
    .post('/auth/logout', async ({ request, set }) => {
      const sessionId = sessionIdOf(request.headers, options.publicUrl, options.alwaysSecure);
      if (sessionId) {
        if (!isCsrfTokenOf(options.secret, sessionId, request.headers.get(CSRF_HEADER))) throw new ForbiddenError('missing or invalid CSRF token');
        await cp.mutation({ identity: null }, 'sessions', 'delete', { sessionId });
      }
      set.status = 204;
      set.headers['set-cookie'] = [
        cookie(SESSION_COOKIE, '', { httpOnly: true, maxAge: 0 }),
        cookie(CSRF_COOKIE, '', { sameSite: 'strict', maxAge: 0 }),
      ];
    });
}
