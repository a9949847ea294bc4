import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../identity/token-verifier.ts';
import { authenticate } from './auth.ts';

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
});
