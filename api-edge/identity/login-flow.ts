import { randomInt } from 'node:crypto';

import * as oidc from 'openid-client';

export interface PkceLoginOptions {
  /** Issuer (origin) of the identity provider. */
  issuer: string;
  email: string;
  /** Default `svc-cli`. */
  clientId?: string;
  /** Default `openid email profile offline_access api`. */
  scope?: string;
  /** Default `http://127.0.0.1:<random port>/callback` (loopback redirect of a native client). */
  redirectUri?: string;
}

export interface PkceLoginResult {
  accessToken: string;
  idToken?: string;
  refreshToken?: string;
  expiresIn?: number;
}

/** The authorization response reached the redirect URI; the code is not yet exchanged. */
export interface PendingAuthorization {
  config: oidc.Configuration;
  /** Full redirect URI the provider sent the browser to, with `code`, `state` and `iss`. */
  callbackUrl: URL;
  redirectUri: string;
  codeVerifier: string;
  state: string;
}

export type LoginFlowErrorCode = 'unreachable' | 'unknown_user' | 'protocol';

/** Why a programmatic login failed: the provider is unreachable, the user is unknown, or the flow broke. */
export class LoginFlowError extends Error {
  override readonly name = 'LoginFlowError';
  readonly code: LoginFlowErrorCode;

  constructor(code: LoginFlowErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

const DEFAULT_CLIENT_ID = 'svc-cli';
const DEFAULT_SCOPE = 'openid email profile offline_access api';
const MAX_HOPS = 20;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Logs in through the provider's real authorization-code + PKCE flow over HTTP, behaving like a browser:
 * follows redirects by hand, keeps the provider's cookies, submits the login form with `email`, stops at the
 * redirect URI and exchanges the code. Throws `LoginFlowError`.
 */
export async function loginWithPkce(opts: PkceLoginOptions): Promise<PkceLoginResult> {
  const pending = await authorizeWithPkce(opts);
  let tokens: oidc.TokenEndpointResponse;
  try {
    tokens = await oidc.authorizationCodeGrant(pending.config, pending.callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
    });
  } catch (err) {
    throw new LoginFlowError('protocol', `code exchange failed: ${describe(err)}`, { cause: err });
  }
  const result: PkceLoginResult = { accessToken: tokens.access_token };
  if (tokens.id_token !== undefined) result.idToken = tokens.id_token;
  if (tokens.refresh_token !== undefined) result.refreshToken = tokens.refresh_token;
  if (tokens.expires_in !== undefined) result.expiresIn = tokens.expires_in;
  return result;
}

/** Runs the front-channel part of the flow (discovery, authorization request, login) up to the redirect URI. */
export async function authorizeWithPkce(opts: PkceLoginOptions): Promise<PendingAuthorization> {
  const clientId = opts.clientId ?? DEFAULT_CLIENT_ID;
  const scope = opts.scope ?? DEFAULT_SCOPE;
  const redirectUri = opts.redirectUri ?? `http://127.0.0.1:${randomInt(49152, 65536)}/callback`;
  const config = await discover(opts.issuer, clientId);

  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const params: Record<string, string> = {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
  };
  // oidc-provider drops offline_access unless consent is explicitly prompted for.
  if (scope.split(' ').includes('offline_access')) params['prompt'] = 'consent';

  const browser = new Browser(new URL(opts.issuer).origin);
  let url = oidc.buildAuthorizationUrl(config, params);
  let response = await browser.request(url);
  let loginSubmitted = false;

  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      if (isRedirectUri(url, redirectUri)) {
        return { config, callbackUrl: url, redirectUri, codeVerifier, state };
      }
      response = await browser.request(url);
      continue;
    }

    const body = await response.text();
    if (response.ok && !loginSubmitted) {
      const action = loginFormAction(body);
      if (!action) break;
      loginSubmitted = true;
      url = new URL(action, url);
      response = await browser.request(url, new URLSearchParams({ email: opts.email }));
      continue;
    }
    if (loginSubmitted && response.status === 400 && url.pathname.endsWith('/login')) {
      throw new LoginFlowError('unknown_user', `unknown user: ${opts.email}`);
    }
    throw new LoginFlowError('protocol', `unexpected ${response.status} response from ${url.origin}${url.pathname}`);
  }
  throw new LoginFlowError('protocol', 'authorization did not reach the redirect URI');
}

async function discover(issuer: string, clientId: string): Promise<oidc.Configuration> {
  const server = new URL(issuer);
  try {
    return await oidc.discovery(server, clientId, undefined, oidc.None(), {
      execute: server.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      timeout: REQUEST_TIMEOUT_MS / 1000,
    });
  } catch (err) {
    if (isNetworkFailure(err)) {
      throw new LoginFlowError('unreachable', `identity provider not reachable at ${server.origin}`, { cause: err });
    }
    throw new LoginFlowError('protocol', `discovery failed at ${server.origin}: ${describe(err)}`, { cause: err });
  }
}

function isRedirectUri(url: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return url.origin === expected.origin && url.pathname === expected.pathname;
}

function loginFormAction(html: string): string | undefined {
  for (const form of html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/gi)) {
    if (!/\bname="email"/i.test(form[0])) continue;
    const action = /\baction="([^"]*)"/i.exec(form[0])?.[1];
    if (action !== undefined) return decodeHtmlAttribute(action);
  }
  return undefined;
}

function decodeHtmlAttribute(value: string): string {
  return value.replace(/&(#\d+|#x[\da-f]+|amp|quot|lt|gt|apos);/gi, (_match, entity: string) => {
    const lower = entity.toLowerCase();
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return { amp: '&', quot: '"', lt: '<', gt: '>', apos: "'" }[lower] ?? '';
  });
}

function isNetworkFailure(err: unknown): boolean {
  for (let current = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return true;
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_)/.test(code)) {
      return true;
    }
  }
  return false;
}

function describe(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  if (err instanceof oidc.AuthorizationResponseError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

/** A minimal browser for one origin: manual redirects and a path-aware cookie jar. */
class Browser {
  readonly #origin: string;
  readonly #cookies = new Map<string, { name: string; value: string; path: string }>();

  constructor(origin: string) {
    this.#origin = origin;
  }

  async request(url: URL, form?: URLSearchParams): Promise<Response> {
    if (url.origin !== this.#origin) {
      throw new LoginFlowError('protocol', `unexpected redirect to ${url.origin}${url.pathname}`);
    }
    const headers = new Headers({ accept: 'text/html' });
    const cookie = this.#cookieHeader(url.pathname);
    if (cookie) headers.set('cookie', cookie);
    if (form) headers.set('content-type', 'application/x-www-form-urlencoded');
    let response: Response;
    try {
      response = await fetch(url, {
        method: form ? 'POST' : 'GET',
        headers,
        body: form?.toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new LoginFlowError('unreachable', `identity provider not reachable at ${this.#origin}`, { cause: err });
    }
    this.#store(response.headers.getSetCookie(), url.pathname);
    return response;
  }

  #cookieHeader(pathname: string): string {
    const pairs: string[] = [];
    for (const cookie of this.#cookies.values()) {
      if (pathMatches(pathname, cookie.path)) pairs.push(`${cookie.name}=${cookie.value}`);
    }
    return pairs.join('; ');
  }

  #store(setCookies: string[], requestPath: string): void {
    for (const header of setCookies) {
      const [pair = '', ...attributes] = header.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let path = defaultPath(requestPath);
      let expired = value === '';
      for (const attribute of attributes) {
        const [key = '', attrValue = ''] = attribute.split('=', 2).map((part) => part.trim());
        const lowerKey = key.toLowerCase();
        if (lowerKey === 'path' && attrValue.startsWith('/')) path = attrValue;
        if (lowerKey === 'max-age' && Number(attrValue) <= 0) expired = true;
        if (lowerKey === 'expires' && Date.parse(attrValue) <= Date.now()) expired = true;
      }
      const key = `${name};${path}`;
      if (expired) this.#cookies.delete(key);
      else this.#cookies.set(key, { name, value, path });
    }
  }
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

function defaultPath(requestPath: string): string {
  const lastSlash = requestPath.lastIndexOf('/');
  return lastSlash <= 0 ? '/' : requestPath.slice(0, lastSlash);
}
