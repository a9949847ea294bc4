import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertSecureUrl, writeTokens, type StoredTokens } from '../config.ts';
import { CliError } from '../errors.ts';

export const CLI_CLIENT_ID = 'svc-cli';
export const DEFAULT_SCOPE = 'openid email profile offline_access api';
const TIMEOUT_MS = 5 * 60_000;

export interface LoginOptions {
  baseUrl: string;
  profile: string;
  scope?: string;
  callbackPort?: number;
  /** Told the address to open (the command prints it and may open a browser). */
  onAuthorizationUrl: (url: string) => void;
}

/** The provider's and the client's reasons, for E104. */
function reason(error: unknown): string {
  const e = error as { error?: string; error_description?: string; message?: string };
  if (e?.error) return `${e.error}${e.error_description ? `: ${e.error_description}` : ''}`;
  return e?.message ?? String(error);
}

/** Opens the address in the desktop's browser, if there is one; failures are ignored (the address is printed anyway). */
export function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no browser: the user opens the printed address
  }
}

type OidcConfiguration = Awaited<ReturnType<(typeof import('openid-client'))['discovery']>>;

/** The provider's configuration for the client, from discovery at the base URL: E201 unreachable, E104 otherwise. */
async function discover(baseUrl: string): Promise<OidcConfiguration> {
  const oidc = await import('openid-client');
  assertSecureUrl(baseUrl, 'the identity provider');
  const server = new URL(baseUrl);
  try {
    return await oidc.discovery(server, CLI_CLIENT_ID, undefined, oidc.None(), {
      execute: server.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      timeout: 10,
    });
  } catch (error) {
    if (error instanceof TypeError || (error as { code?: string }).code === 'OAUTH_TIMEOUT') throw new CliError('E201', { url: baseUrl }, { cause: error });
    throw new CliError('E104', { details: `discovery failed at ${server.origin}: ${reason(error)}` }, { cause: error });
  }
}

/** Saves a token response to `~/.svc/tokens.json` and says what was saved. */
async function saveTokens(
  profile: string,
  issuer: string,
  tokens: { access_token: string; refresh_token?: string; id_token?: string; expires_in?: number },
  scope: string,
): Promise<{ issuer: string; expiresAt?: number; scope: string }> {
  const stored: StoredTokens = { accessToken: tokens.access_token, issuer };
  if (tokens.refresh_token) stored.refreshToken = tokens.refresh_token;
  if (tokens.id_token) stored.idToken = tokens.id_token;
  if (tokens.expires_in !== undefined) stored.expiresAt = Math.floor(Date.now() / 1000) + tokens.expires_in;
  await writeTokens(profile, stored);
  return { issuer, ...(stored.expiresAt ? { expiresAt: stored.expiresAt } : {}), scope };
}

/**
 * Whether this terminal can show a browser on this machine: not over SSH, and on Linux and the
 * BSDs only with a display. Where it cannot, login uses the device authorization grant.
 */
export function browserAvailable(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (env['SSH_CONNECTION'] || env['SSH_CLIENT'] || env['SSH_TTY']) return false;
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env['DISPLAY'] || env['WAYLAND_DISPLAY']);
}

/**
 * Logs in with the device authorization grant (RFC 8628): the provider gives a code and an address
 * that the user opens on any device; the client polls the token endpoint until the user has
 * confirmed, then saves the tokens as the browser flow does. E104 when the user aborts or the code expires.
 */
export async function loginWithDevice(options: {
  baseUrl: string;
  profile: string;
  scope?: string;
  onUserCode: (code: { userCode: string; verificationUri: string; verificationUriComplete?: string; expiresIn: number }) => void;
}): Promise<{ issuer: string; expiresAt?: number; scope: string }> {
  const oidc = await import('openid-client');
  const config = await discover(options.baseUrl);
  const scope = options.scope ?? DEFAULT_SCOPE;
  let tokens: Awaited<ReturnType<typeof oidc.pollDeviceAuthorizationGrant>>;
  try {
    const device = await oidc.initiateDeviceAuthorization(config, { scope });
    options.onUserCode({
      userCode: device.user_code,
      verificationUri: device.verification_uri,
      ...(device.verification_uri_complete ? { verificationUriComplete: device.verification_uri_complete } : {}),
      expiresIn: device.expires_in,
    });
    tokens = await oidc.pollDeviceAuthorizationGrant(config, device);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('E104', { details: reason(error) }, { cause: error });
  }
  return saveTokens(options.profile, config.serverMetadata().issuer, tokens, scope);
}

/**
 * Logs in with the authorization code flow and PKCE (S256) against the issuer at the base URL
 * (discovery at `/.well-known/openid-configuration`): a loopback server on 127.0.0.1 receives the
 * code on `/callback`, the code is exchanged with the verifier, and the tokens are saved to
 * `~/.svc/tokens.json` (mode 0600). E201 when the provider is unreachable, E104 when the flow fails.
 */
export async function loginWithBrowser(options: LoginOptions): Promise<{ issuer: string; expiresAt?: number; scope: string }> {
  const oidc = await import('openid-client');
  // Loaded here, not when the client starts: Node's HTTP server is only needed for this callback.
  const { createServer } = await import('node:http');
  const config = await discover(options.baseUrl);

  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const scope = options.scope ?? DEFAULT_SCOPE;
  let resolveCallback!: (url: URL) => void;
  const callback = new Promise<URL>((resolve) => (resolveCallback = resolve));
  const listener: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    const ok = url.searchParams.has('code') && url.searchParams.get('state') === state;
    response.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(ok ? 'Logged in to svc. You may close this window.\n' : 'Login failed; see the terminal.\n');
    resolveCallback(new URL(`http://127.0.0.1:${(listener.address() as AddressInfo).port}${url.pathname}${url.search}`));
  });
  listener.listen(options.callbackPort ?? 0, '127.0.0.1');
  try {
    await once(listener, 'listening');
  } catch (error) {
    throw new CliError('E305', { details: `cannot listen on 127.0.0.1:${options.callbackPort}: ${(error as Error).message}` });
  }
  try {
    const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    };
    if (scope.split(' ').includes('offline_access')) params['prompt'] = 'consent';
    options.onAuthorizationUrl(oidc.buildAuthorizationUrl(config, params).href);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CliError('E104', { details: 'no answer from the browser within 5 minutes' })), TIMEOUT_MS);
    });
    const answered = await Promise.race([callback, timeout]).finally(() => clearTimeout(timer));
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, answered, { pkceCodeVerifier: verifier, expectedState: state });
    } catch (error) {
      throw new CliError('E104', { details: reason(error) }, { cause: error });
    }
    return await saveTokens(options.profile, config.serverMetadata().issuer, tokens, scope);
  } finally {
    listener.close();
  }
}

/** Tokens are refreshed this long before they expire, so that a call never starts with one about to lapse. */
const REFRESH_MARGIN_S = 60;

/** Whether stored tokens should be refreshed now: they expire within the margin and there is a refresh token. */
export function needsRefresh(tokens: StoredTokens, nowS = Date.now() / 1000): boolean {
  return tokens.refreshToken !== undefined && tokens.expiresAt !== undefined && tokens.expiresAt - REFRESH_MARGIN_S <= nowS;
}

/**
 * Exchanges the refresh token at the issuer's token endpoint (the refresh_token grant) and saves
 * the new tokens over the old. E102 when the provider refuses it (the session has ended: log in
 * again), E201 when it cannot be reached.
 */
export async function refreshTokens(options: { baseUrl: string; profile: string; tokens: StoredTokens }): Promise<StoredTokens> {
  const oidc = await import('openid-client');
  const server = options.tokens.issuer ?? options.baseUrl;
  const config = await discover(server);
  let refreshed: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
  try {
    refreshed = await oidc.refreshTokenGrant(config, options.tokens.refreshToken!);
  } catch (error) {
    if (error instanceof TypeError || (error as { code?: string }).code === 'OAUTH_TIMEOUT') throw new CliError('E201', { url: server }, { cause: error });
    throw new CliError('E102', {}, { cause: error });
  }
  const stored: StoredTokens = { ...options.tokens, accessToken: refreshed.access_token };
  if (refreshed.refresh_token) stored.refreshToken = refreshed.refresh_token;
  if (refreshed.id_token) stored.idToken = refreshed.id_token;
  if (refreshed.expires_in !== undefined) stored.expiresAt = Math.floor(Date.now() / 1000) + refreshed.expires_in;
  await writeTokens(options.profile, stored);
  return stored;
}

/** What logout could do at the provider: revoked, or why not (the tokens are forgotten locally either way). */
export type Revocation = { revoked: true; issuer: string } | { revoked: false; issuer: string; reason: string };

/**
 * Revokes stored tokens at their issuer (RFC 7009, the discovery document's
 * `revocation_endpoint`): the refresh token, which ends the grant, then the access token. A
 * provider that cannot revoke a self-contained (JWT) access token says `unsupported_token_type`;
 * that token lapses at its expiry. Never throws: a provider that cannot be reached, or has no
 * revocation endpoint, is reported in the result.
 */
export async function revokeTokens(tokens: StoredTokens, fallbackIssuer?: string): Promise<Revocation> {
  const issuer = tokens.issuer ?? fallbackIssuer;
  if (!issuer) return { revoked: false, issuer: 'unknown', reason: 'the tokens name no identity provider' };
  try {
    const oidc = await import('openid-client');
    const config = await discover(issuer);
    if (!config.serverMetadata().revocation_endpoint) return { revoked: false, issuer, reason: 'the identity provider offers no revocation endpoint' };
    const revoke = async (token: string, hint: 'refresh_token' | 'access_token') => {
      try {
        await oidc.tokenRevocation(config, token, { token_type_hint: hint });
      } catch (error) {
        if (hint === 'access_token' && (error as { error?: string }).error === 'unsupported_token_type') return;
        throw error;
      }
    };
    if (tokens.refreshToken) await revoke(tokens.refreshToken, 'refresh_token');
    await revoke(tokens.accessToken, 'access_token');
    return { revoked: true, issuer };
  } catch (error) {
    const cause = error instanceof CliError && error.code === 'E201' ? 'it could not be reached' : error instanceof CliError ? error.message : reason(error);
    return { revoked: false, issuer, reason: cause };
  }
}
