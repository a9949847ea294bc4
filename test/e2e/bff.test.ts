import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

/** A minimal browser: one origin, a cookie jar, redirects followed by hand, no Authorization header ever. */
class Browser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie line received, with its attributes. */
  readonly setCookies: string[] = [];
  /** Every response body read through `text()` in `signIn`, and every one read by tests. */
  readonly bodies: string[] = [];
  constructor(private readonly origin: string) {}

  async fetch(path: string, init: { method?: string; body?: string | URLSearchParams; headers?: Record<string, string> } = {}) {
    const url = new URL(path, this.origin);
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...init.headers, cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      const expired = attributes.some((a) => /max-age=0\b/i.test(a.trim()));
      if (expired || value === '') this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
    return response;
  }

  /** Follows redirects from `path`, submitting the provider's login form with `email` when shown. */
  async signIn(path: string, email: string): Promise<Response> {
    let response = await this.fetch(path);
    for (let hop = 0; hop < 20; hop++) {
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        response = await this.fetch(location);
        continue;
      }
      const html = await response.text();
      this.bodies.push(html);
      const action = /<form[^>]*action="([^"]+)"/i.exec(html)?.[1];
      if (!action) return response;
      response = await this.fetch(action.replace(/&amp;/g, '&'), { method: 'POST', body: new URLSearchParams({ email }) });
    }
    throw new Error('sign-in did not finish');
  }
}

describe('backend-for-frontend sessions', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack?.close());

  it('signs in on the server and authenticates API calls with the HttpOnly session cookie alone', async () => {
    const browser = new Browser(stack.url);
    const landed = await browser.signIn('/auth/login?returnTo=/app/projects', ADMIN);
    expect(landed.status).toBe(404);
    expect(new URL(landed.url).pathname).toBe('/app/projects');
    expect(browser.cookies.has('svc_session')).toBe(true);
    expect(browser.cookies.has('svc_auth_tx')).toBe(false);

    const me = await browser.fetch(`${V3}/users/me`);
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).email).toBe(ADMIN);
  });

  it('sets the session cookie HttpOnly and never hands a token to the browser', async () => {
    const browser = new Browser(stack.url);
    await browser.signIn('/auth/login', ADMIN);
    const response = await browser.fetch(`${V3}/users/me`);
    expect(response.status).toBe(200);
    browser.bodies.push(await response.text());

    const attributesOf = (name: string) =>
      browser.setCookies.filter((line) => line.startsWith(`${name}=`) && !/max-age=0\b/i.test(line)).map((line) => line.split(';').slice(1).map((a) => a.trim().toLowerCase()));
    for (const cookie of ['svc_session', 'svc_auth_tx']) {
      const sets = attributesOf(cookie);
      expect(sets.length, cookie).toBeGreaterThan(0);
      for (const attributes of sets) expect(attributes, cookie).toEqual(expect.arrayContaining(['httponly', 'samesite=lax']));
    }
    // The CSRF cookie is the one the page's script reads, to echo it in a header.
    expect(attributesOf('svc_csrf')[0]).toEqual(expect.arrayContaining(['samesite=strict']));
    expect(attributesOf('svc_csrf')[0]).not.toContain('httponly');

    // No cookie and no page the browser saw holds a JWT (header.payload.signature, base64url JSON).
    const jwt = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/;
    expect(browser.setCookies.filter((line) => jwt.test(decodeURIComponent(line)))).toEqual([]);
    expect(browser.bodies.filter((body) => jwt.test(body))).toEqual([]);
    expect(browser.cookies.get('svc_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses state changes without the CSRF header, accepts them with it', async () => {
    const browser = new Browser(stack.url);
    await browser.signIn('/auth/login', ADMIN);
    const body = JSON.stringify({ name: 'Made in the browser' });
    const json = { 'content-type': 'application/json' };
    const forged = await browser.fetch(`${V3}/resources/project`, { method: 'POST', body, headers: json });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as any).error.code).toBe('FORBIDDEN');
    const wrong = await browser.fetch(`${V3}/resources/project`, { method: 'POST', body, headers: { ...json, 'x-csrf-token': 'guess' } });
    expect(wrong.status).toBe(403);
    const ok = await browser.fetch(`${V3}/resources/project`, {
      method: 'POST',
      body,
      headers: { ...json, 'x-csrf-token': browser.cookies.get('svc_csrf')! },
    });
    expect(ok.status).toBe(201);
  });

  it('refuses a CSRF token that is not its session\u2019s: another session\u2019s, or a pair planted in the cookie jar', async () => {
    const victim = new Browser(stack.url);
    await victim.signIn('/auth/login', ADMIN);
    const other = new Browser(stack.url);
    await other.signIn('/auth/login', ADMIN);
    const post = (csrf: string) =>
      fetch(`${stack.url}${V3}/resources/project`, {
        method: 'POST',
        body: JSON.stringify({ name: 'Forged' }),
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, cookie: `svc_session=${victim.cookies.get('svc_session')}; svc_csrf=${csrf}` },
      });
    // A token valid for another session (a sibling subdomain's page, or a session signed in before).
    const foreign = await post(other.cookies.get('svc_csrf')!);
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).error.code).toBe('FORBIDDEN');
    // A cookie the attacker wrote next to the session cookie, echoed in the header: the old double submit let it through.
    expect((await post('planted-by-a-sibling-subdomain')).status).toBe(403);
    // Logout is a state change too.
    const out = await fetch(`${stack.url}/auth/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': 'planted', cookie: `svc_session=${victim.cookies.get('svc_session')}; svc_csrf=planted` },
    });
    expect(out.status).toBe(403);
    expect((await victim.fetch(`${V3}/users/me`)).status).toBe(200);
    // The session's own token still works.
    expect((await post(victim.cookies.get('svc_csrf')!)).status).toBe(201);
  });

  it('names the cookies without the __Host- prefix and without Secure on a plain-http public URL (local development)', async () => {
    const browser = new Browser(stack.url);
    await browser.signIn('/auth/login', ADMIN);
    const set = browser.setCookies.filter((line) => !/max-age=0\b/i.test(line));
    expect(set.map((line) => line.slice(0, line.indexOf('=')))).toEqual(expect.arrayContaining(['svc_auth_tx', 'svc_session', 'svc_csrf']));
    for (const line of set) {
      expect(line).not.toMatch(/^__Host-/);
      expect(line.toLowerCase()).not.toMatch(/;\s*secure\b/);
      expect(line.toLowerCase()).not.toMatch(/;\s*domain=/);
    }
  });

  it('replaces the browser\u2019s session when it signs in again: the old one no longer authenticates', async () => {
    const browser = new Browser(stack.url);
    await browser.signIn('/auth/login', ADMIN);
    const first = browser.cookies.get('svc_session')!;
    await browser.signIn('/auth/login', ADMIN);
    const second = browser.cookies.get('svc_session')!;
    expect(second).not.toBe(first);
    expect((await fetch(`${stack.url}${V3}/users/me`, { headers: { cookie: `svc_session=${second}` } })).status).toBe(200);
    expect((await fetch(`${stack.url}${V3}/users/me`, { headers: { cookie: `svc_session=${first}` } })).status).toBe(401);
  });

  it('ends the session on logout', async () => {
    const browser = new Browser(stack.url);
    await browser.signIn('/auth/login', ADMIN);
    const sessionId = browser.cookies.get('svc_session')!;
    const out = await browser.fetch('/auth/logout', { method: 'POST', headers: { 'x-csrf-token': browser.cookies.get('svc_csrf')! } });
    expect(out.status).toBe(204);
    expect(browser.cookies.has('svc_session')).toBe(false);
    const replayed = await fetch(`${stack.url}${V3}/users/me`, { headers: { cookie: `svc_session=${sessionId}` } });
    expect(replayed.status).toBe(401);
  });

  it('rejects a callback without a sign-in in progress, and never redirects off-site', async () => {
    const browser = new Browser(stack.url);
    const callback = await browser.fetch('/auth/callback?code=x&state=y');
    expect(callback.status).toBe(400);
    // Off-site however written: browsers drop tabs and newlines from a URL and read a backslash as a slash.
    for (const returnTo of ['//evil.example/steal', '/%09/evil.example/x', '/%0a/evil.example/x', '/%5Cevil.example/x', '/%5C%5Cevil.example', 'https://evil.example/', '/.//evil.example', '/a/../..//evil.example/x', '/%2e%2e//evil.example']) {
      const landed = await new Browser(stack.url).signIn(`/auth/login?returnTo=${returnTo}`, ADMIN);
      expect(new URL(landed.url).origin, returnTo).toBe(stack.url);
      expect(new URL(landed.url).pathname, returnTo).toBe('/');
    }
    const kept = await new Browser(stack.url).signIn(`/auth/login?returnTo=${encodeURIComponent('/app/projects?tab=open#top')}`, ADMIN);
    expect(kept.url.slice(stack.url.length)).toBe('/app/projects?tab=open');
  });

  it('treats a session cookie that is not a session id as no session: 401, on the API and on logout', async () => {
    for (const sessionId of ['short', 'x'.repeat(43).replace(/x$/, '!'), 'a'.repeat(200)]) {
      const response = await fetch(`${stack.url}${V3}/users/me`, { headers: { cookie: `svc_session=${sessionId}` } });
      expect(response.status, sessionId).toBe(401);
      expect(((await response.json()) as any).error.code).toBe('UNAUTHORIZED');
    }
    const out = await fetch(`${stack.url}/auth/logout`, { method: 'POST', headers: { cookie: 'svc_session=short' } });
    expect(out.status).toBe(204);
  });
});
