import { execa } from 'execa';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/stack/process.ts';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { svc } from './svc.ts';

const BIN = fileURLToPath(new URL('../../cli/bin/svc.js', import.meta.url));

/** Plays the user's browser: follows redirects with cookies and submits the dev provider's login form. */
async function browse(start: string, email: string): Promise<Response> {
  const cookies = new Map<string, string>();
  let url = new URL(start);
  let form: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
      redirect: 'manual',
    });
    form = undefined;
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = response.headers.get('location');
    if (url.hostname === '127.0.0.1' && url.pathname === '/callback') return response;
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    const action = /<form\b[^>]*action="([^"]*)"[\s\S]*?name="email"/i.exec(html)?.[1];
    if (!action) throw new Error(`no login form at ${url.pathname} (${response.status})`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    form = new URLSearchParams({ email });
  }
  throw new Error('the login did not reach the callback');
}

/** The named form of a page: where it posts and its fields (hidden ones with their values). */
function formOf(html: string, id?: string): { action: string; fields: Record<string, string> } | undefined {
  const form = new RegExp(`<form\\b[^>]*${id ? `id="${id.replace('.', '\\.')}"` : ''}[^>]*>([\\s\\S]*?)</form>`, 'i').exec(html);
  if (!form) return undefined;
  const action = /action="([^"]*)"/i.exec(form[0])?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const input of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = /name="([^"]*)"/i.exec(input[0])?.[1];
    if (name) fields[name] = /value="([^"]*)"/i.exec(input[0])?.[1] ?? '';
  }
  return { action: action.replace(/&amp;/g, '&'), fields };
}

/** Plays the user on another device: opens the verification address, confirms the code, signs in, and returns the last page. */
async function confirmDevice(start: string, email: string): Promise<string> {
  const cookies = new Map<string, string>();
  let url = new URL(start);
  let form: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form?.toString(),
      redirect: 'manual',
    });
    form = undefined;
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    // The code from the address is posted by a form of its own (sent by script in a browser), then confirmed.
    const confirm = formOf(html, 'op.deviceConfirmForm') ?? (/name="user_code"/.test(html) ? formOf(html) : undefined);
    const login = /<form\b[^>]*action="([^"]*)"[\s\S]*?name="email"/i.exec(html)?.[1];
    if (confirm) {
      url = new URL(confirm.action, url);
      form = new URLSearchParams(confirm.fields);
    } else if (login) {
      url = new URL(login.replace(/&amp;/g, '&'), url);
      form = new URLSearchParams({ email });
    } else return html;
  }
  throw new Error('the device sign-in did not finish');
}

describe('svc login', { timeout: 90_000 }, () => {
  let stack: TestStack;
  let home: string;

  beforeAll(async () => {
    stack = await startTestStack();
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** Starts `svc login --browser` with `dir` as its home; resolves with the process and the sign-in address it prints. */
  async function startBrowserLogin(dir: string, args: string[] = ['--tenant-id', 'acme']) {
    const env = { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], HOME: dir, BASE_URL_PUBLIC_API: stack.url };
    const login = execa('node', [BIN, 'login', '--browser', ...args], { env, extendEnv: false, reject: false, stdin: 'ignore' });
    let stderr = '';
    const address = await new Promise<string>((resolve, reject) => {
      login.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /^(http\S+\/oauth2\/\S+)$/m.exec(stderr)?.[1];
        if (found) resolve(found);
      });
      void login.then(() => reject(new Error(`login exited first: ${stderr}`)));
    });
    return { login, address };
  }

  it('logs in with PKCE through a localhost callback, saves the tokens 0600, selects the tenant, and logs out', async () => {
    const { login, address } = await startBrowserLogin(home);
    expect(new URL(address).searchParams.get('code_challenge_method')).toBe('S256');
    expect(new URL(address).searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const callback = await browse(address, ADMIN);
    expect(callback.status).toBe(200);
    const done = await login;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stderr).toContain('Active tenant: ');

    const tokens = join(home, '.svc', 'tokens.json');
    expect((await stat(tokens)).mode & 0o777).toBe(0o600);
    const who = await svc(['whoami'], { HOME: home });
    expect(who.stdout).toMatch(/^status\s+logged in$/m);
    expect(who.stdout).toMatch(new RegExp(`^user\\s+${ADMIN}$`, 'm'));
    expect(who.stdout).toMatch(/^token\s+~\/\.svc\/tokens\.json$/m);
    expect(who.stdout).toMatch(/^tenant\s+acme /m);
    // The saved token and the selected tenant are enough for a data command.
    const listed = await svc(['resources', 'list', 'project', '--limit', '1', '--format', 'json'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(listed.exitCode, listed.stderr).toBe(0);

    // A token about to expire is refreshed with the refresh token before the call, and saved.
    const saved = JSON.parse(await readFile(tokens, 'utf8'));
    expect(saved.default.refreshToken).toEqual(expect.any(String));
    await writeFile(tokens, JSON.stringify({ default: { ...saved.default, expiresAt: Math.floor(Date.now() / 1000) + 10 } }), { mode: 0o600 });
    const refreshedCall = await svc(['resources', 'list', 'project', '--limit', '1', '--format', 'json'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(refreshedCall.exitCode, refreshedCall.stderr).toBe(0);
    const refreshed = JSON.parse(await readFile(tokens, 'utf8')).default;
    expect(refreshed.accessToken).not.toBe(saved.default.accessToken);
    expect(refreshed.expiresAt).toBeGreaterThan(Math.floor(Date.now() / 1000) + 60);
    expect((await stat(tokens)).mode & 0o777).toBe(0o600);
    // A refresh token the provider refuses means logging in again: E102.
    await writeFile(tokens, JSON.stringify({ default: { ...refreshed, refreshToken: 'not-a-refresh-token', expiresAt: Math.floor(Date.now() / 1000) - 1 } }), { mode: 0o600 });
    const refused = await svc(['resources', 'list', 'project', '--limit', '1', '--format', 'json'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(refused.json.error).toMatchObject({ code: 'E102', exitCode: 4 });

    expect((await svc(['logout'], { HOME: home })).exitCode).toBe(0);
    await expect(stat(tokens)).rejects.toThrow();
    const after = await svc(['resources', 'list', 'project', '--tenant-id', 'acme', '--format', 'json'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(after.json.error).toMatchObject({ code: 'E101' });
  });

  it('asks for the --scope given, listens on the --callback-port given, and selects the tenant by --tenant-name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-home-'));
    try {
      const acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme');
      const port = await freePort();
      const { login, address } = await startBrowserLogin(dir, ['--tenant-name', acme.name, '--scope', 'openid email profile api', '--callback-port', String(port)]);
      const asked = new URL(address).searchParams;
      expect(asked.get('scope')).toBe('openid email profile api');
      expect(asked.get('redirect_uri')).toBe(`http://127.0.0.1:${port}/callback`);
      expect((await browse(address, ADMIN)).status).toBe(200);
      const done = await login;
      expect(done.exitCode, done.stderr).toBe(0);
      expect(done.stderr).toContain(`Active tenant: ${acme.name} (acme)`);
      expect(JSON.parse(await readFile(join(dir, '.svc', 'context.json'), 'utf8')).default).toEqual({ tenantId: acme.id, tenantSlug: 'acme' });
      // Without offline_access the provider gives no refresh token.
      const saved = JSON.parse(await readFile(join(dir, '.svc', 'tokens.json'), 'utf8')).default;
      expect(saved).toMatchObject({ accessToken: expect.any(String) });
      expect(saved.refreshToken).toBeUndefined();

      // A port already taken is refused before the browser is sent anywhere.
      const busy = createServer().listen(port, '127.0.0.1');
      await once(busy, 'listening');
      try {
        const refused = await svc(['login', '--browser', '--callback-port', String(port)], { HOME: dir, BASE_URL_PUBLIC_API: stack.url });
        expect(refused.exitCode).toBe(2);
        expect(refused.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
        expect(refused.stderr).not.toContain('Open this address');
      } finally {
        busy.close();
      }
      const badPort = await svc(['login', '--callback-port', 'eighty'], { HOME: dir, BASE_URL_PUBLIC_API: stack.url });
      expect(badPort.exitCode).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** Logs in through the browser flow into `dir` as `email`; resolves once the tokens are saved. */
  async function loginInto(dir: string, email = ADMIN) {
    const { login, address } = await startBrowserLogin(dir);
    expect((await browse(address, email)).status).toBe(200);
    const done = await login;
    expect(done.exitCode, done.stderr).toBe(0);
    return JSON.parse(await readFile(join(dir, '.svc', 'tokens.json'), 'utf8')).default as { accessToken: string; refreshToken: string; issuer: string };
  }

  /** The provider's token endpoint asked to refresh `refreshToken` for the CLI's client. */
  const refreshAt = async (refreshToken: string) => {
    const discovery = (await (await fetch(`${stack.url}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const response = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'svc-cli' }),
    });
    return { status: response.status, body: (await response.json()) as { error?: string } };
  };

  it('revokes the refresh token at the provider on logout: the old one is refused at the token endpoint', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-home-'));
    try {
      const saved = await loginInto(dir);
      const out = await svc(['logout'], { HOME: dir });
      expect(out.exitCode, out.stderr).toBe(0);
      expect(out.stdout + out.stderr).toContain('Logged out');
      await expect(stat(join(dir, '.svc', 'tokens.json'))).rejects.toThrow();
      const refused = await refreshAt(saved.refreshToken);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('forgets the tokens on logout when the provider cannot be reached, and says so on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-home-'));
    try {
      const saved = await loginInto(dir);
      // The provider has moved away (nothing listens on port 9): the tokens are forgotten here all the same.
      await writeFile(join(dir, '.svc', 'tokens.json'), JSON.stringify({ default: { ...saved, issuer: 'http://127.0.0.1:9' } }), { mode: 0o600 });
      const out = await svc(['logout'], { HOME: dir });
      expect(out.exitCode, out.stderr).toBe(0);
      expect(out.stderr).toMatch(/could not revoke .*http:\/\/127\.0\.0\.1:9/i);
      await expect(stat(join(dir, '.svc', 'tokens.json'))).rejects.toThrow();
      // Not revoked: the provider never heard of the logout.
      expect((await refreshAt(saved.refreshToken)).status).toBe(200);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('logs in with the device authorization grant where no browser can open, and saves the tokens', async () => {
    const deviceHome = await mkdtemp(join(tmpdir(), 'svc-home-'));
    try {
      // No DISPLAY and an SSH session: the client cannot show a browser here, so it asks for a code on another device.
      const env = { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], HOME: deviceHome, BASE_URL_PUBLIC_API: stack.url, SSH_CONNECTION: '10.0.0.1 22 10.0.0.2 22' };
      const login = execa('node', [BIN, 'login', '--tenant-id', 'acme'], { env, extendEnv: false, reject: false, stdin: 'ignore' });
      let stderr = '';
      const prompt = await new Promise<{ uri: string; code: string; complete: string }>((resolve, reject) => {
        login.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const found = /open (http\S+) on any device and enter the code (\S+)\n\(or open (http\S+)\)/.exec(stderr);
          if (found) resolve({ uri: found[1]!, code: found[2]!, complete: found[3]! });
        });
        void login.then(() => reject(new Error(`login exited first: ${stderr}`)));
      });
      expect(new URL(prompt.uri).pathname).toBe('/oauth2/v2.0/device');
      expect(new URL(prompt.complete).searchParams.get('user_code')).toBe(prompt.code);
      const last = await confirmDevice(prompt.complete, ADMIN);
      expect(last).toContain('Your device is signed in');
      const done = await login;
      expect(done.exitCode, done.stderr).toBe(0);
      expect(done.stderr).toContain('Active tenant: ');
      const saved = JSON.parse(await readFile(join(deviceHome, '.svc', 'tokens.json'), 'utf8')).default;
      expect(saved).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), expiresAt: expect.any(Number) });
      const listed = await svc(['resources', 'list', 'project', '--limit', '1', '--format', 'json'], { HOME: deviceHome, BASE_URL_PUBLIC_API: stack.url });
      expect(listed.exitCode, listed.stderr).toBe(0);

      const both = await svc(['login', '--device', '--browser'], { HOME: deviceHome, BASE_URL_PUBLIC_API: stack.url });
      expect(both.exitCode).toBe(2);
    } finally {
      await rm(deviceHome, { recursive: true, force: true });
    }
  });
});
