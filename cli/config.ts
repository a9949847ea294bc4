import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors.ts';

/**
 * The client's local state under `~/.svc/`:
 * - `tokens.json` (mode 0600): `{<profile>: {accessToken, refreshToken?, idToken?, expiresAt?, issuer?}}`;
 * - `profiles.json`: `{<profile>: {baseUrl}}`, the locally configured profiles (`--profile`);
 * - `context.json`: `{<profile>: {tenantId, tenantSlug}}`, the tenant chosen by `tenant select`.
 */

export interface StoredTokens {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** Seconds since the epoch. */
  expiresAt?: number;
  issuer?: string;
}

export interface Profile {
  baseUrl?: string;
}

export interface TenantContext {
  tenantId: string;
  tenantSlug?: string;
}

export const DEFAULT_PROFILE = 'default';

export const svcDir = () => join(homedir(), '.svc');
export const tokensPath = () => join(svcDir(), 'tokens.json');
const profilesPath = () => join(svcDir(), 'profiles.json');
const contextPath = () => join(svcDir(), 'context.json');

async function readJson<T>(path: string): Promise<Record<string, T> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('E006', { details: `${path}: ${(error as Error).message}` });
  }
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, T>;
  } catch (error) {
    throw new CliError('E006', { details: `${path}: ${(error as Error).message}` });
  }
}

/** Writes the whole file under a temporary name, then renames it: a client running at the same time reads the old file or the new one, never half of one. */
async function writeJson(path: string, value: unknown, mode = 0o600): Promise<void> {
  await mkdir(svcDir(), { recursive: true, mode: 0o700 });
  // node:crypto is loaded on a write only: the client starts without it.
  const { randomBytes } = await import('node:crypto');
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, JSON.stringify(value, null, 2) + '\n', { mode });
    await chmod(temporary, mode);
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Whether a URL's host is this machine: `localhost`, an address of 127.0.0.0/8, or `[::1]`. */
const isLoopback = (url: URL) => url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname);

/**
 * Refuses (E006) an address the client would send a token or an authorization code to in the
 * clear: `http:` for any host but this machine's loopback. `what` names the setting in the message.
 */
export function assertSecureUrl(address: string, what = 'the base URL'): void {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new CliError('E006', { details: `${what} ${address} is not a URL` });
  }
  if (url.protocol === 'http:' && !isLoopback(url)) {
    throw new CliError('E006', {
      details: `${what} ${url.origin} uses http:, which would send tokens in the clear; use https:// (plain http is allowed only for localhost, 127.0.0.1 and [::1])`,
    });
  }
}

/** The profile's base URL; `BASE_URL_PUBLIC_API` overrides it. E006 for plain `http:` to a host that is not this machine. */
export async function resolveBaseUrl(profile: string): Promise<string | undefined> {
  const baseUrl = await configuredBaseUrl(profile);
  if (baseUrl) assertSecureUrl(baseUrl);
  return baseUrl;
}

async function configuredBaseUrl(profile: string): Promise<string | undefined> {
  const fromEnv = process.env['BASE_URL_PUBLIC_API'];
  if (fromEnv) return fromEnv.replace(/\/+$/, '');
  const profiles = await readJson<Profile>(profilesPath());
  // A named profile needs the file that defines it; the default profile may have none.
  if (profile !== DEFAULT_PROFILE && !profiles) throw new CliError('E003', { file: profilesPath() });
  const entry = profiles?.[profile];
  if (profile !== DEFAULT_PROFILE && !entry) {
    throw new CliError('E006', { details: `profile "${profile}" is not defined in ${profilesPath()}` });
  }
  return entry?.baseUrl?.replace(/\/+$/, '');
}

/** The stored tokens of a profile, and whether the file is readable by others than its owner. */
export async function readTokens(profile: string): Promise<{ tokens?: StoredTokens; looseMode: boolean }> {
  const all = await readJson<StoredTokens>(tokensPath());
  if (!all) return { looseMode: false };
  const mode = (await stat(tokensPath())).mode & 0o077;
  return { tokens: all[profile], looseMode: mode !== 0 };
}

export async function writeTokens(profile: string, tokens: StoredTokens): Promise<void> {
  const all = (await readJson<StoredTokens>(tokensPath())) ?? {};
  all[profile] = tokens;
  await writeJson(tokensPath(), all);
}

/** Every profile's stored tokens (an unreadable file counts as none: logging out still removes it). */
export async function readAllTokens(): Promise<Record<string, StoredTokens>> {
  return (await readJson<StoredTokens>(tokensPath()).catch(() => undefined)) ?? {};
}

/** Deletes the tokens file and the tenant context (every profile's: logging out is global). */
export async function clearLocalSession(): Promise<{ removedTokens: boolean }> {
  const existed = await stat(tokensPath()).then(() => true, () => false);
  await rm(tokensPath(), { force: true });
  await rm(contextPath(), { force: true });
  return { removedTokens: existed };
}

export async function readTenantContext(profile: string): Promise<TenantContext | undefined> {
  return (await readJson<TenantContext>(contextPath()))?.[profile];
}

/** Sets the profile's active tenant; `undefined` clears it. */
export async function writeTenantContext(profile: string, context: TenantContext | undefined): Promise<void> {
  const all = (await readJson<TenantContext>(contextPath())) ?? {};
  if (context) all[profile] = context;
  else delete all[profile];
  await writeJson(contextPath(), all);
}
