import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../identity/token-verifier.ts';
import { randomBytes } from 'node:crypto';
import { authenticate, bffCookie, bffCookieName, csrfTokenFor, isCsrfTokenOf, type BrowserSessions } from './auth.ts';

describe('authenticate', () => {
  it('reads an empty X-Tenant-Id header as no tenant, so the token’s tenant applies (as over the HTTP link)', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const verify = createTokenVerifier({ issuer: 'https://issuer.test', audience: 'svc', jwks: { keys: [jwk] } });
    const token = await new SignJWT({ tid: 'acme' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('https://issuer.test')
      .setAudience('svc')
      .setSubject('user-1')
      .setExpirationTime('5m')
      .sign(privateKey);
    const call = (tenant?: string) =>
      authenticate({ method: 'GET', headers: new Headers({ authorization: `Bearer ${token}`, ...(tenant === undefined ? {} : { 'x-tenant-id': tenant }) }) }, verify);

    expect((await call('')).tenantHint).toBeUndefined();
    expect((await call()).tenantHint).toBeUndefined();
    expect((await call('globex')).tenantHint).toBe('globex');
    expect((await call('')).identity.tenant).toBe('acme');
  });

  it('takes the session cookie by its __Host- name on https, and the CSRF token of that session only', async () => {
    const signInKey = randomBytes(32);
    const [mine, theirs] = ['A'.repeat(43), 'B'.repeat(43)];
    const sessions = (publicUrl: string): BrowserSessions => ({ token: async (id) => (id === mine ? 'the-token' : undefined), signInKey, publicUrl: () => publicUrl });
    const verify = async () => ({ sub: 'user-1' }) as never;
    const post = (cookie: string, csrf: string | undefined, publicUrl: string) =>
      authenticate({ method: 'POST', headers: new Headers({ cookie, ...(csrf ? { 'x-csrf-token': csrf } : {}) }) }, verify, sessions(publicUrl));

    const https = 'https://platform.example.test';
    expect((await post(`__Host-svc_session=${mine}`, csrfTokenFor(signInKey, mine), https)).token).toBe('the-token');
    // On https a cookie without the prefix may have come from a sibling subdomain: no session.
    await expect(post(`svc_session=${mine}`, csrfTokenFor(signInKey, mine), https)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(post(`__Host-svc_session=${mine}`, csrfTokenFor(signInKey, theirs), https)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(post(`__Host-svc_session=${mine}; __Host-svc_csrf=x`, 'x', https)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(post(`__Host-svc_session=${mine}`, undefined, https)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    // Another key (another installation) makes other tokens.
    await expect(post(`__Host-svc_session=${mine}`, csrfTokenFor(randomBytes(32), mine), https)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await post(`svc_session=${mine}`, csrfTokenFor(signInKey, mine), 'http://localhost:8080')).token).toBe('the-token');
  });

  it('compares CSRF tokens of any length without throwing', () => {
    const key = randomBytes(32);
    const id = 'C'.repeat(43);
    expect(isCsrfTokenOf(key, id, csrfTokenFor(key, id))).toBe(true);
    for (const sent of ['', 'short', csrfTokenFor(key, id) + 'x', null, undefined]) expect(isCsrfTokenOf(key, id, sent)).toBe(false);
  });

  it('builds __Host- cookies (Secure, Path=/, no Domain) for an https public URL, and plain ones for http', () => {
    const https = bffCookie('https://platform.example.test', 'svc_session', 'value', { httpOnly: true, maxAge: 60 });
    expect(https).toMatch(/^__Host-svc_session=value;/);
    const attributes = https.split(';').slice(1).map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['path=/', 'secure', 'httponly', 'samesite=lax', 'max-age=60']));
    expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
    expect(bffCookie('https://platform.example.test', 'svc_csrf', 't', { sameSite: 'strict' })).toMatch(/^__Host-svc_csrf=t;.*Path=\/.*Secure.*SameSite=Strict/);
    expect(bffCookie('https://platform.example.test', 'svc_auth_tx', 'p', { httpOnly: true })).toMatch(/^__Host-svc_auth_tx=p;.*Path=\/;/);

    const http = bffCookie('http://localhost:8080', 'svc_session', 'value', { httpOnly: true });
    expect(http).toMatch(/^svc_session=value;/);
    expect(http.toLowerCase()).not.toContain('secure');
    expect(bffCookieName('http://127.0.0.1:8080', 'svc_csrf')).toBe('svc_csrf');
    expect(bffCookieName('https://127.0.0.1:8443', 'svc_csrf')).toBe('__Host-svc_csrf');
  });
});
