import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';

/**
 * The app's backend-for-frontend. The browser never holds a token: sign-in is an OAuth 2.0
 * authorization-code flow with PKCE that this server runs with the app's client at the platform's
 * identity provider; the access token stays here, keyed by an HttpOnly session cookie, and every
 * call to the platform's REST v3 API (`/api/svc/v3/...`) goes through this server, which adds the
 * token. A call that changes something must carry the session's CSRF token in `X-CSRF-Token`.
 *
 * Sessions live in this process's memory: a restart signs everyone out. A session ends when its
 * access token expires (no refresh token is asked for).
 */

const SESSION_COOKIE = 'app_session';
const SIGN_IN_COOKIE = 'app_sign_in';
const CSRF_HEADER = 'x-csrf-token';
const SIGN_IN_TTL_S = 600;
const MAX_PENDING = 10_000;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const API_PREFIX = '/api/svc/v3/';
/** Request headers passed on to the platform; cookies and the browser's own credentials never are. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'accept-language', 'content-type', 'content-length', 'if-match', 'if-none-match', 'idempotency-key', 'last-event-id'];
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length', 'set-cookie', 'upgrade']);

const token = () => randomBytes(32).toString('base64url');
const sha256 = (text) => createHash('sha256').update(text).digest('base64url');

function cookiesOf(req) {
  const cookies = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) cookies[part.slice(0, at).trim()] = decodeURIComponent(part.slice(at + 1).trim());
  }
  return cookies;
}

function cookie(name, value, { maxAge, secure }) {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

function sendJson(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

const sendError = (res, status, code, message) => sendJson(res, status, { error: { code, message } });

/** Only a path of this site may be returned to after sign-in. */
function safeReturnTo(value) {
  if (!value || !value.startsWith('/') || value.startsWith('//') || /[\u0000-\u001f\u007f\\]/.test(value)) return '/';
  return value;
}

const sameToken = (a, b) => typeof a === 'string' && typeof b === 'string' && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The claims of a JWT, unverified (see `finishSignIn` for why that is enough here). */
function claimsOf(jwt) {
  try {
    return JSON.parse(Buffer.from(String(jwt).split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * @param {{ platformUrl: string, issuer: string, clientId: string, clientSecret?: string, scope: string, appUrl?: string }} options
 */
export function createBff(options) {
  const platformUrl = options.platformUrl.replace(/\/+$/, '');
  const sessions = new Map();
  const pending = new Map();
  let metadata;

  async function discover() {
    if (!metadata) {
      const url = `${options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      const response = await fetch(url, { headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`the identity provider's discovery document at ${url} answered ${response.status}`);
      metadata = await response.json();
    }
    return metadata;
  }

  /** The origin the browser uses: APP_URL when set, else a loopback Host (local development). */
  function originOf(req) {
    if (options.appUrl) return options.appUrl.replace(/\/+$/, '');
    const host = req.headers.host ?? '';
    const hostname = host.replace(/:\d+$/, '');
    if (!LOOPBACK_HOSTS.has(hostname)) return undefined;
    return `http://${host}`;
  }

  function sweep(now) {
    for (const [id, entry] of pending) if (entry.expiresAt <= now) pending.delete(id);
    for (const [id, session] of sessions) if (session.expiresAt <= now) sessions.delete(id);
  }

  function sessionOf(req) {
    const id = cookiesOf(req)[SESSION_COOKIE];
    const session = id ? sessions.get(id) : undefined;
    if (!session) return undefined;
    if (session.expiresAt <= Date.now() / 1000) {
      sessions.delete(id);
      return undefined;
    }
    return { id, ...session };
  }

  async function startSignIn(req, res, url) {
    const origin = originOf(req);
    if (!origin) return sendError(res, 400, 'VALIDATION_ERROR', 'set APP_URL to the address the browser uses for this app');
    const now = Math.floor(Date.now() / 1000);
    sweep(now);
    if (pending.size >= MAX_PENDING) return sendError(res, 429, 'RATE_LIMIT_EXCEEDED', 'too many sign-ins in progress; try again shortly');
    const provider = await discover();
    const id = token();
    const entry = { verifier: token(), state: token(), nonce: token(), redirectUri: `${origin}/auth/callback`, returnTo: safeReturnTo(url.searchParams.get('returnTo')), expiresAt: now + SIGN_IN_TTL_S };
    pending.set(id, entry);
    const authorize = new URL(provider.authorization_endpoint);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: options.clientId,
      redirect_uri: entry.redirectUri,
      scope: options.scope,
      state: entry.state,
      nonce: entry.nonce,
      code_challenge: sha256(entry.verifier),
      code_challenge_method: 'S256',
    }).toString();
    res.writeHead(302, { location: authorize.href, 'set-cookie': cookie(SIGN_IN_COOKIE, id, { maxAge: SIGN_IN_TTL_S, secure: origin.startsWith('https:') }), 'cache-control': 'no-store' });
    res.end();
  }

  /**
   * Exchanges the code for tokens on the server. The ID token is read without checking its
   * signature: it comes straight from the provider's token endpoint over a connection this server
   * opened (OpenID Connect Core 3.1.3.7); its issuer, audience, nonce and expiry are still checked.
   */
  async function finishSignIn(req, res, url) {
    const id = cookiesOf(req)[SIGN_IN_COOKIE];
    const entry = id ? pending.get(id) : undefined;
    if (id) pending.delete(id);
    if (!entry || entry.expiresAt <= Date.now() / 1000) return sendError(res, 400, 'VALIDATION_ERROR', 'no sign-in in progress, or it expired: start again');
    if (url.searchParams.get('error')) return sendError(res, 401, 'UNAUTHORIZED', `sign-in refused: ${url.searchParams.get('error_description') ?? url.searchParams.get('error')}`);
    if (!sameToken(url.searchParams.get('state'), entry.state)) return sendError(res, 400, 'VALIDATION_ERROR', 'the sign-in answer does not match the sign-in started here');
    const provider = await discover();
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: url.searchParams.get('code') ?? '', redirect_uri: entry.redirectUri, code_verifier: entry.verifier });
    const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (options.clientSecret) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`;
    else form.set('client_id', options.clientId);
    const response = await fetch(provider.token_endpoint, { method: 'POST', headers, body: form });
    const tokens = await response.json().catch(() => ({}));
    if (!response.ok || !tokens.access_token) return sendError(res, 401, 'UNAUTHORIZED', `sign-in failed at the token endpoint: ${tokens.error_description ?? tokens.error ?? response.status}`);
    const claims = claimsOf(tokens.id_token) ?? {};
    const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== provider.issuer || !audience.includes(options.clientId) || claims.nonce !== entry.nonce || !(claims.exp > now)) {
      return sendError(res, 401, 'UNAUTHORIZED', 'sign-in failed: the ID token is not for this sign-in');
    }
    const sessionId = token();
    const expiresAt = now + (Number(tokens.expires_in) || 3600);
    sessions.set(sessionId, { accessToken: tokens.access_token, expiresAt, csrfToken: token(), user: { email: claims.email ?? null, name: claims.name ?? null } });
    const secure = entry.redirectUri.startsWith('https:');
    res.writeHead(302, {
      location: entry.returnTo,
      'set-cookie': [cookie(SESSION_COOKIE, sessionId, { maxAge: expiresAt - now, secure }), cookie(SIGN_IN_COOKIE, '', { maxAge: 0, secure })],
      'cache-control': 'no-store',
    });
    res.end();
  }

  function signOut(req, res) {
    const session = sessionOf(req);
    if (session) {
      if (!sameToken(req.headers[CSRF_HEADER], session.csrfToken)) return sendError(res, 403, 'FORBIDDEN', 'missing or invalid CSRF token');
      sessions.delete(session.id);
    }
    res.writeHead(204, { 'set-cookie': cookie(SESSION_COOKIE, '', { maxAge: 0, secure: Boolean(options.appUrl?.startsWith('https:')) }) });
    res.end();
  }

  function describeSession(req, res) {
    const session = sessionOf(req);
    if (!session) return sendJson(res, 200, { signedIn: false });
    sendJson(res, 200, { signedIn: true, user: session.user, expiresAt: new Date(session.expiresAt * 1000).toISOString(), csrfToken: session.csrfToken });
  }

  /** Passes a v3 call to the platform with the session's token, and its answer back as it streams (chat events included). */
  async function proxy(req, res, url) {
    const session = sessionOf(req);
    if (!session) return sendError(res, 401, 'UNAUTHORIZED', 'sign in first');
    if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method) && !sameToken(req.headers[CSRF_HEADER], session.csrfToken)) {
      return sendError(res, 403, 'FORBIDDEN', 'missing or invalid CSRF token');
    }
    const headers = { authorization: `Bearer ${session.accessToken}` };
    for (const name of FORWARDED_REQUEST_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name];
    const upstream = new AbortController();
    res.on('close', () => upstream.abort());
    const hasBody = !['GET', 'HEAD'].includes(req.method);
    let response;
    try {
      response = await fetch(`${platformUrl}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: 'half',
        signal: upstream.signal,
      });
    } catch {
      if (!res.headersSent) sendError(res, 502, 'BAD_GATEWAY', `the platform at ${platformUrl} cannot be reached`);
      return;
    }
    // The platform no longer takes this token: the session is over.
    if (response.status === 401) sessions.delete(session.id);
    const answer = {};
    for (const [name, value] of response.headers) if (!HOP_BY_HOP.has(name)) answer[name] = value;
    res.writeHead(response.status, answer);
    if (!response.body) return res.end();
    Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
  }

  return {
    /** Handles the request when it is one of the BFF's; resolves to false otherwise. */
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://app.invalid');
      if (url.pathname === '/auth/login' && req.method === 'GET') return startSignIn(req, res, url).then(() => true);
      if (url.pathname === '/auth/callback' && req.method === 'GET') return finishSignIn(req, res, url).then(() => true);
      if (url.pathname === '/auth/logout' && req.method === 'POST') return (signOut(req, res), true);
      if (url.pathname === '/auth/session' && req.method === 'GET') return (describeSession(req, res), true);
      if (url.pathname.startsWith(API_PREFIX)) return proxy(req, res, url).then(() => true);
      return false;
    },
  };
}
