import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JSONWebKeySet, type JWK } from 'jose';
import type {
  Account,
  ClientMetadata,
  Configuration,
  Interaction,
  KoaContextWithOIDC,
  default as OidcProvider,
} from 'oidc-provider';

import { DEV_USERS, findDevUserByEmail, type DevUser } from './dev-users.ts';
import { DOCS_CLIENT_ID, DOCS_REDIRECT_PATH, PROVIDER_ROUTES, PROVIDER_SCOPES } from './provider-routes.ts';

/** A public client registered in addition to the built-in `svc-cli` and `svc-bff`. */
export interface DevClient {
  clientId: string;
  redirectUris: string[];
}

/** A client the platform registered for an app (v4 provisioning/idp-apps), as the provider needs it. */
export interface RegisteredClient {
  clientId: string;
  displayName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
}

/**
 * Where the provider finds the clients the platform registers, asked on each authorization and
 * token request, so that a new client works at once and a rotated secret stops when the platform
 * says (after its overlap, or at once). Secrets are never handed over: the platform checks them.
 */
export interface RegisteredClients {
  find(clientId: string): Promise<RegisteredClient | undefined>;
  verifySecret(clientId: string, secret: string): Promise<boolean>;
}

export interface DevIdentityProviderOptions {
  /** Origin the provider is reached at, e.g. `http://localhost:8080` (no path). */
  issuer: string;
  /** Audience (resource indicator) of every access token. */
  audience: string;
  /** Private signing JWKS. A fresh RS256 key is generated when omitted. */
  jwks?: JSONWebKeySet;
  users?: readonly DevUser[];
  clients?: readonly DevClient[];
  /** Clients registered through the platform, beside the static ones. */
  registeredClients?: RegisteredClients;
  /** Keys that sign the provider's cookies. Random per process when omitted. */
  cookieKeys?: readonly string[];
  /** Trust `X-Forwarded-*` headers (set when a TLS-terminating proxy sits in front). */
  trustProxy?: boolean;
  /** Receives unexpected provider errors (their responses are already sent as 500). */
  onError?: (err: unknown) => void;
}

export interface DevIdentityProvider {
  /** Serves a request whose path `handles()` accepted. Never rejects; failures become error responses. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  handles(pathname: string): boolean;
  publicJwks: JSONWebKeySet;
  issuer: string;
}

export const CLI_CLIENT_ID = 'svc-cli';
export const BFF_CLIENT_ID = 'svc-bff';

const ACCESS_TOKEN_TTL_S = 60 * 60;
/** oidc-provider's default clock tolerance, which its in-memory adapter takes too. */
const CLOCK_TOLERANCE_S = 15;
const RESOURCE_SCOPE = 'api';
const INTERACTION_PREFIX = '/interaction/';
const MAX_FORM_BYTES = 8 * 1024;
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;
/** Notices oidc-provider prints that are expected here: Node 20 runtime and the in-memory adapter. */
const EXPECTED_NOTICES = [/Unsupported runtime/, /in-memory adapter is used/];

type OidcModule = typeof import('oidc-provider');
let oidcModule: Promise<OidcModule> | undefined;

/**
 * Creates the built-in OAuth 2.0 / OpenID Connect provider for development and tests.
 *
 * Authorization code flow with PKCE (S256) is required for every client; access tokens are RS256 JWTs for
 * `audience` carrying `sub`, `email`, `email_verified`, `name` and `tid` (tenant slug), valid for one hour. Login asks for an
 * e-mail address only and consent is granted automatically: it authenticates nobody and MUST NOT be used in
 * production. State (sessions, grants, codes, refresh tokens) lives in oidc-provider's in-memory adapter, so
 * it is lost on restart and cannot be shared between processes.
 */
export async function createDevIdentityProvider(opts: DevIdentityProviderOptions): Promise<DevIdentityProvider> {
  const issuer = normalizeIssuer(opts.issuer);
  const users = opts.users ?? DEV_USERS;
  const privateJwks = opts.jwks ?? (await generateSigningJwks());
  const publicJwks = toPublicJwks(privateJwks);
  const onError = opts.onError ?? ((err: unknown) => console.error('dev identity provider error:', err));

  const { default: Provider, errors } = await loadOidcProvider();

  const usersBySub = new Map(users.map((user) => [user.sub, user]));
  const staticClients = [...builtInClients(issuer), ...(opts.clients ?? []).map(publicClient)];
  const config: Configuration = {
    clients: staticClients,
    ...(opts.registeredClients ? { adapter: await registeredClientsAdapter(opts.registeredClients) } : {}),
    jwks: structuredClone(privateJwks),
    cookies: {
      keys: [...(opts.cookieKeys ?? [randomBytes(32).toString('base64url')])],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: { ...PROVIDER_ROUTES },
    pkce: { required: () => true },
    scopes: [...PROVIDER_SCOPES],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture', 'tid'],
    },
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: true },
      // The device authorization grant (RFC 8628), for `svc login` where no browser can be opened.
      deviceFlow: { enabled: true, userCodeInputSource, userCodeConfirmSource, successSource: deviceSuccessSource },
      rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource },
      // Token revocation (RFC 7009): revoking a refresh token ends its grant (`svc logout`).
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => opts.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== opts.audience) throw new errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPE,
            audience: opts.audience,
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    findAccount: (_ctx, sub) => {
      const user = usersBySub.get(sub);
      return user ? toAccount(user) : undefined;
    },
    extraTokenClaims: (_ctx, token) => {
      const user = 'accountId' in token && token.accountId ? usersBySub.get(token.accountId) : undefined;
      return user ? { email: user.email, email_verified: user.emailVerified ?? true, name: user.name, picture: user.picture, tid: user.tenant } : undefined;
    },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}` },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      DeviceCode: 10 * 60,
      IdToken: ACCESS_TOKEN_TTL_S,
      RefreshToken: 14 * 24 * 60 * 60,
      Interaction: 10 * 60,
      Session: 8 * 60 * 60,
      Grant: 14 * 24 * 60 * 60,
    },
    clientBasedCORS: (_ctx, origin, client) =>
      (client.redirectUris ?? []).some((uri) => parseUrl(uri)?.origin === origin),
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page('Sign-in error', `<p>${escapeHtml(out.error)}${out.error_description ? `: ${escapeHtml(out.error_description)}` : ''}</p>`);
    },
  };

  const provider = withExpectedNoticesSilenced(() => new Provider(issuer, config));
  if (opts.registeredClients) checkRegisteredSecrets(provider, opts.registeredClients, new Set(staticClients.map((c) => c.client_id)));
  provider.proxy = opts.trustProxy ?? false;
  provider.on('server_error', (_ctx, err) => onError(err));
  provider.onerror = (err: Error) => onError(err);
  const providerCallback = provider.callback();

  const interactions = createInteractionHandler(provider, errors.SessionNotFound, users);
  const requestContext = await loadProviderRequestContext();
  let inFlight = 0;

  return {
    issuer,
    publicJwks,
    handles,
    handle(req, res) {
      inFlight++;
      const pathname = pathnameOf(req);
      const work = pathname.startsWith(INTERACTION_PREFIX)
        ? interactions(req, res, pathname)
        : providerCallback(req, res);
      work
        .catch((err: unknown) => {
          onError(err);
          if (!res.headersSent) sendHtml(res, 500, page('Sign-in error', '<p>Internal error.</p>'));
          else res.destroy();
        })
        .finally(() => {
          if (--inFlight === 0) requestContext?.disable();
        });
    },
  };
}

/**
 * oidc-provider keeps each request's context in an AsyncLocalStorage, which it enables with its
 * first request. On Node 20 an enabled AsyncLocalStorage installs promise hooks that tax every
 * promise of the process (several percent of the API's CPU) for as long as it lives, so the
 * storage is disabled whenever no sign-in request is in flight; the provider's next request
 * enables it again. Undefined when that module is not where this oidc-provider version keeps it.
 */
async function loadProviderRequestContext(): Promise<{ disable(): void } | undefined> {
  try {
    const { default: storage } = await import('oidc-provider/lib/helpers/als.js');
    return storage instanceof AsyncLocalStorage ? storage : undefined;
  } catch {
    return undefined;
  }
}

function handles(pathname: string): boolean {
  return (
    pathname.startsWith('/oauth2/') ||
    pathname === '/.well-known/openid-configuration' ||
    pathname.startsWith(INTERACTION_PREFIX)
  );
}

function builtInClients(issuer: string): ClientMetadata[] {
  return [
    {
      // Native app (RFC 8252): a loopback redirect URI matches with any port.
      client_id: CLI_CLIENT_ID,
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
    },
    {
      client_id: BFF_CLIENT_ID,
      application_type: 'web',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [`${issuer}/auth/callback`],
      post_logout_redirect_uris: [`${issuer}/`],
    },
    {
      // The API reference page (`/docs`): Swagger UI signs in from the browser with PKCE.
      client_id: DOCS_CLIENT_ID,
      application_type: 'web',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [`${issuer}${DOCS_REDIRECT_PATH}`],
    },
  ];
}

function publicClient(client: DevClient): ClientMetadata {
  const allLoopback = client.redirectUris.every(isLoopbackHttp);
  return {
    client_id: client.clientId,
    application_type: allLoopback ? 'native' : 'web',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [...client.redirectUris],
  };
}

/** Stands in for a registered client's secret in its metadata, which oidc-provider requires; the platform checks the real one. */
const SECRET_CHECKED_BY_PLATFORM = 'checked-by-the-platform';

/** oidc-provider metadata of a client the platform registered: authorization code with PKCE, and a refresh token. */
function registeredClientMetadata(client: RegisteredClient): ClientMetadata {
  const confidential = client.tokenEndpointAuthMethod !== 'none';
  return {
    client_id: client.clientId,
    client_name: client.displayName,
    application_type: client.redirectUris.every(isLoopbackHttp) ? 'native' : 'web',
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(confidential ? { client_secret: SECRET_CHECKED_BY_PLATFORM } : {}),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [...client.redirectUris],
  };
}

/**
 * oidc-provider's storage: its in-memory adapter for sessions, grants, codes and tokens (as
 * without one), and the platform's registered clients for `Client`, which oidc-provider asks only
 * for ids that are not static clients. Nothing registers clients through the provider itself.
 */
async function registeredClientsAdapter(registered: RegisteredClients) {
  const { createMemoryAdapter } = await import('oidc-provider/lib/adapters/memory_adapter.js');
  const memory = createMemoryAdapter(CLOCK_TOLERANCE_S);
  const clients = {
    find: async (id: string) => {
      const client = await registered.find(id);
      return client ? registeredClientMetadata(client) : undefined;
    },
    upsert: async () => {
      throw new Error('clients are registered through the platform, not the identity provider');
    },
    destroy: async () => {},
    consume: async () => {},
    findByUid: async () => undefined,
    findByUserCode: async () => undefined,
    revokeByGrantId: async () => {},
  };
  return (model: string) => (model === 'Client' ? clients : memory(model)) as never;
}

/**
 * A registered client's secret is checked by the platform, which keeps only its hash: oidc-provider
 * exposes `compareClientSecret` on its client class for that. Static clients compare as before.
 */
function checkRegisteredSecrets(provider: OidcProvider, registered: RegisteredClients, staticIds: ReadonlySet<unknown>): void {
  const clientClass = provider.Client as unknown as { prototype: { compareClientSecret(this: { clientId: string }, actual: string): Promise<boolean> | boolean } };
  const compareStatic = clientClass.prototype.compareClientSecret;
  clientClass.prototype.compareClientSecret = async function compareClientSecret(this: { clientId: string }, actual: string) {
    if (staticIds.has(this.clientId)) return compareStatic.call(this, actual);
    return typeof actual === 'string' && actual !== '' && registered.verifySecret(this.clientId, actual);
  };
}

function isLoopbackHttp(uri: string): boolean {
  const url = parseUrl(uri);
  return url?.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

function toAccount(user: DevUser): Account {
  return {
    accountId: user.sub,
    claims: () => ({
      sub: user.sub,
      email: user.email,
      email_verified: user.emailVerified ?? true,
      name: user.name,
      picture: user.picture,
      tid: user.tenant,
    }),
  };
}

type SessionNotFoundClass = OidcModule['errors']['SessionNotFound'];

/**
 * Serves `/interaction/<uid>` (login page, or automatic consent) and `POST /interaction/<uid>/login`.
 * The interaction is looked up through oidc-provider's signed, path-scoped, SameSite=Lax interaction cookie,
 * and its uid must equal the one in the path.
 */
function createInteractionHandler(
  provider: OidcProvider,
  SessionNotFound: SessionNotFoundClass,
  users: readonly DevUser[],
) {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> => {
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(pathname);
    if (!match) return sendHtml(res, 404, page('Not found', '<p>Not found.</p>'));
    const uid = match[1] ?? '';
    const isLoginSubmit = match[2] !== undefined;

    let details: Interaction;
    try {
      details = await provider.interactionDetails(req, res);
    } catch (err) {
      if (err instanceof SessionNotFound) return sendExpired(res);
      throw err;
    }
    if (details.uid !== uid) return sendExpired(res);

    if (!isLoginSubmit) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, 'GET, HEAD');
      if (details.prompt.name === 'login') return sendHtml(res, 200, loginPage(uid, users));
      if (details.prompt.name === 'consent') return grantConsent(provider, req, res, details);
      return sendHtml(res, 400, page('Sign-in error', '<p>Unsupported sign-in step.</p>'));
    }

    if (req.method !== 'POST') return sendMethodNotAllowed(res, 'POST');
    if (details.prompt.name !== 'login') return sendExpired(res);
    const form = await readForm(req);
    if (!form) return sendHtml(res, 413, page('Sign-in error', '<p>Request too large.</p>'));
    const email = form.get('email') ?? '';
    const user = findDevUserByEmail(users, email);
    if (!user) {
      const error = email.trim() ? `Unknown user: ${email.trim()}` : 'Enter an e-mail address.';
      return sendHtml(res, 400, loginPage(uid, users, { error, email }));
    }
    await provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
  };
}

/** Grants every scope, claim and resource scope the pending request asks for, then resumes the authorization. */
async function grantConsent(
  provider: OidcProvider,
  req: IncomingMessage,
  res: ServerResponse,
  details: Interaction,
): Promise<void> {
  const accountId = details.session?.accountId;
  const clientId = details.params['client_id'];
  if (!accountId || typeof clientId !== 'string') return sendExpired(res);

  const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const missing = details.prompt.details;
  if (isStringArray(missing['missingOIDCScope'])) grant.addOIDCScope(missing['missingOIDCScope']);
  if (isStringArray(missing['missingOIDCClaims'])) grant.addOIDCClaims(missing['missingOIDCClaims']);
  const resourceScopes = missing['missingResourceScopes'];
  if (resourceScopes && typeof resourceScopes === 'object') {
    for (const [indicator, scopes] of Object.entries(resourceScopes)) {
      if (isStringArray(scopes)) grant.addResourceScope(indicator, scopes);
    }
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_FORM_BYTES) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(uid: string, users: readonly DevUser[], state: { error?: string; email?: string } = {}): string {
  const action = `${INTERACTION_PREFIX}${encodeURIComponent(uid)}/login`;
  const userButtons = users
    .map(
      (user) =>
        `<li><form method="post" action="${escapeHtml(action)}"><input type="hidden" name="email" value="${escapeHtml(user.email)}">` +
        `<button type="submit">${escapeHtml(user.name)} &lt;${escapeHtml(user.email)}&gt;</button></form></li>`,
    )
    .join('');
  const error = state.error ? `<p role="alert" class="error">${escapeHtml(state.error)}</p>` : '';
  return page(
    'Sign in (development)',
    `<h1>Sign in</h1>
<p class="note">Development identity provider: no password is checked. Never use it in production.</p>
${error}
<form method="post" action="${escapeHtml(action)}">
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(state.email ?? '')}">
<button type="submit">Sign in</button>
</form>
<h2>Seeded users</h2>
<ul>${userButtons}</ul>`,
  );
}

async function logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  ctx.type = 'html';
  ctx.body = page(
    'Sign out',
    `<h1>Sign out?</h1>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button>`,
  );
}

async function postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
  ctx.type = 'html';
  ctx.body = page('Signed out', '<h1>Signed out</h1>');
}

type ProviderContext = { type: string; body: unknown; oidc: { client?: { clientName?: string; clientId: string } } };

/** The page where a user types the code a device shows; `form` is the provider's form (with its CSRF field). */
async function userCodeInputSource(ctx: ProviderContext, form: string, _out: unknown, error?: { name?: string; userCode?: string }): Promise<void> {
  const message = !error
    ? '<p>Enter the code shown on your device.</p>'
    : error.userCode || error.name === 'NoCodeError'
      ? '<p class="error">That code is not valid. Try again.</p>'
      : '<p class="error">The sign-in could not go on. Start again on your device.</p>';
  ctx.type = 'html';
  ctx.body = page('Device sign-in', `<h1>Device sign-in</h1>${message}${form}<button type="submit" form="op.deviceInputForm">Continue</button>`);
}

/** The page that asks the user to confirm the code before signing the device in. */
async function userCodeConfirmSource(ctx: ProviderContext, form: string, client: { clientName?: string; clientId: string }, _device: unknown, userCode: string): Promise<void> {
  const name = escapeHtml(client.clientName ?? client.clientId);
  ctx.type = 'html';
  ctx.body = page(
    'Confirm device',
    `<h1>Confirm device</h1><p><strong>${name}</strong> asks to sign in. Check that your device shows this code:</p><p><code>${escapeHtml(userCode)}</code></p>` +
      `${form}<button type="submit" form="op.deviceConfirmForm">Continue</button> <button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Abort</button>` +
      '<p class="note">If you did not start this, or the codes differ, abort.</p>',
  );
}

async function deviceSuccessSource(ctx: ProviderContext): Promise<void> {
  ctx.type = 'html';
  ctx.body = page('Signed in', '<h1>Signed in</h1><p>Your device is signed in. You may close this page.</p>');
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
input,button{font:inherit;padding:.4rem;margin:.2rem 0}ul{list-style:none;padding:0}
.error{color:#b00020}.note{color:#555;font-size:.9em}</style>
</head>
<body>
${body}
</body>
</html>`;
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.end(html);
}

function sendExpired(res: ServerResponse): void {
  sendHtml(
    res,
    400,
    page('Sign-in error', '<p>This sign-in request has expired or was not started here. Start again from the application.</p>'),
  );
}

function sendMethodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  sendHtml(res, 405, page('Sign-in error', '<p>Method not allowed.</p>'));
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function parseUrl(value: string, base?: string): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

function pathnameOf(req: IncomingMessage): string {
  return parseUrl(req.url ?? '/', 'http://localhost')?.pathname ?? '/';
}

function normalizeIssuer(issuer: string): string {
  const url = parseUrl(issuer);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash) {
    throw new TypeError(`issuer must be an http(s) origin without path, got ${issuer}`);
  }
  return url.origin;
}

/** A fresh RS256 private signing key set for the development provider. */
export async function generateSigningJwks(): Promise<JSONWebKeySet> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  return { keys: [{ ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' }] };
}

function toPublicJwks(jwks: JSONWebKeySet): JSONWebKeySet {
  return {
    keys: jwks.keys
      .filter((key) => key.kty !== 'oct')
      .map((key) => {
        const pub: JWK = { ...key };
        for (const member of PRIVATE_JWK_MEMBERS) delete pub[member];
        return pub;
      }),
  };
}

function loadOidcProvider(): Promise<OidcModule> {
  oidcModule ??= withExpectedNoticesSilenced(() => import('oidc-provider'));
  return oidcModule;
}

/** Runs `fn` with oidc-provider's expected start-up notices filtered out of the console; other output passes. */
function withExpectedNoticesSilenced<T>(fn: () => T): T {
  const { warn, info } = console;
  const filtered =
    (original: (...args: unknown[]) => void) =>
    (...args: unknown[]): void => {
      const [first] = args;
      if (typeof first === 'string' && first.includes('oidc-provider') && EXPECTED_NOTICES.some((re) => re.test(first))) {
        return;
      }
      original.apply(console, args);
    };
  console.warn = filtered(warn);
  console.info = filtered(info);
  let result: T;
  try {
    result = fn();
  } catch (err) {
    console.warn = warn;
    console.info = info;
    throw err;
  }
  if (result instanceof Promise) {
    return result.finally(() => {
      console.warn = warn;
      console.info = info;
    }) as T;
  }
  console.warn = warn;
  console.info = info;
  return result;
}
