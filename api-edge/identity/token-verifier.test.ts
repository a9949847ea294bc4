import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier, InvalidTokenError, withVerificationCache, type VerifiedIdentity } from './token-verifier.ts';

describe('withVerificationCache', () => {
  const identity = (exp: number): VerifiedIdentity => ({ sub: 'u1', token: 't', expiresAt: exp });

  it('verifies a token once while it is valid, again after it expires, and never caches failures', async () => {
    let clock = 1_000_000;
    let calls = 0;
    let fail = false;
    const cached = withVerificationCache(
      async () => {
        calls++;
        if (fail) throw new Error('bad');
        return identity(1_000 + 60);
      },
      { now: () => clock },
    );
    await cached('t');
    await cached('t');
    expect(calls).toBe(1);
    clock = 1_061_000;
    await cached('t');
    expect(calls).toBe(2);
    fail = true;
    await expect(cached('other')).rejects.toThrow('bad');
    await expect(cached('other')).rejects.toThrow('bad');
    expect(calls).toBe(4);
  });
});

describe('createTokenVerifier', () => {
  const issuer = 'https://login.example';
  const audience = 'urn:svc:api';

  async function signer() {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
    const sign = (claims: Record<string, unknown>, build: (jwt: SignJWT) => SignJWT = (jwt) => jwt.setExpirationTime('5m')) =>
      build(new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(issuer).setAudience(audience).setSubject('u1').setIssuedAt()).sign(privateKey);
    return { jwks, sign };
  }

  it('accepts a token of its issuer and audience, and refuses one without exp, expired, or for another audience', async () => {
    const { jwks, sign } = await signer();
    const verify = createTokenVerifier({ issuer, audience, jwks });
    expect(await verify(await sign({ email: 'a@acme.test', tid: 'acme' }))).toMatchObject({ sub: 'u1', email: 'a@acme.test', tenant: 'acme' });
    // Without exp, jose checks no expiry at all: such a token would be valid for ever.
    await expect(verify(await sign({}, (jwt) => jwt))).rejects.toBeInstanceOf(InvalidTokenError);
    await expect(verify(await sign({}, (jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 60)))).rejects.toMatchObject({ reason: 'expired' });
    await expect(verify(await sign({ aud: 'urn:other' }, (jwt) => jwt.setAudience('urn:other').setExpirationTime('5m')))).rejects.toMatchObject({ reason: 'wrong_audience' });
  });

  it('reads the scope claim, space-separated or a list, and names the client by client_id, else azp', async () => {
    const { jwks, sign } = await signer();
    const verify = createTokenVerifier({ issuer, audience, jwks });
    expect(await verify(await sign({ scope: ' openid  resources.read ', azp: 'svc-cli' }))).toMatchObject({ scopes: ['openid', 'resources.read'], clientId: 'svc-cli' });
    expect(await verify(await sign({ scope: ['resources.read'], client_id: 'app', azp: 'other' }))).toMatchObject({ scopes: ['resources.read'], clientId: 'app' });
    expect(await verify(await sign({}))).not.toHaveProperty('scopes');
  });
});
