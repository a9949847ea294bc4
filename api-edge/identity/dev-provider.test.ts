import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDevIdentityProvider, type DevIdentityProvider } from './dev-provider.ts';
import { DEV_USERS } from './dev-users.ts';
import { authorizeWithPkce, LoginFlowError, loginWithPkce } from './login-flow.ts';
import { createTokenVerifier, InvalidTokenError } from './token-verifier.ts';

const AUDIENCE = 'urn:svc-platform:api';
const acmeAdmin = DEV_USERS.find((user) => user.email === 'admin@acme.test')!;

let server: Server;
let issuer: string;
let provider: DevIdentityProvider;

beforeAll(async () => {
  server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (provider?.handles(pathname)) provider.handle(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = await createDevIdentityProvider({ issuer, audience: AUDIENCE });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('dev identity provider', () => {
  it('advertises the v2.0 endpoints and S256 in its discovery document', async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc['issuer']).toBe(issuer);
    expect(doc['authorization_endpoint']).toBe(`${issuer}/oauth2/v2.0/authorize`);
    expect(doc['token_endpoint']).toBe(`${issuer}/oauth2/v2.0/token`);
    expect(doc['jwks_uri']).toBe(`${issuer}/oauth2/v2.0/keys`);
    expect(doc['code_challenge_methods_supported']).toEqual(['S256']);
  });

  it('claims only its own paths', () => {
    expect(provider.handles('/oauth2/v2.0/token')).toBe(true);
    expect(provider.handles('/.well-known/openid-configuration')).toBe(true);
    expect(provider.handles('/interaction/abc')).toBe(true);
    expect(provider.handles('/v4/tenants')).toBe(false);
  });

  it('logs in with PKCE and issues a JWT access token the verifier accepts', async () => {
    const tokens = await loginWithPkce({ issuer, email: 'admin@acme.test' });
    expect(tokens.expiresIn).toBe(3600);
    expect(tokens.idToken).toBeDefined();
    expect(tokens.refreshToken).toBeDefined();

    const verify = createTokenVerifier({ issuer, audience: AUDIENCE, jwksUrl: `${issuer}/oauth2/v2.0/keys` });
    const identity = await verify(tokens.accessToken);
    expect(identity).toMatchObject({
      sub: acmeAdmin.sub,
      email: 'admin@acme.test',
      name: 'Acme Admin',
      tenant: 'acme',
      token: tokens.accessToken,
    });
    expect(identity.expiresAt! - identity.issuedAt!).toBe(3600);

    const claims = decodeJwt(tokens.accessToken);
    expect(claims).toMatchObject({ iss: issuer, aud: AUDIENCE, tid: 'acme', client_id: 'svc-cli' });
    const idClaims = decodeJwt(tokens.idToken!);
    expect(idClaims).toMatchObject({ sub: acmeAdmin.sub, email: 'admin@acme.test', name: 'Acme Admin', aud: 'svc-cli' });
  });

  it('accepts the token with the public JWKS given directly', async () => {
    const { accessToken } = await loginWithPkce({ issuer, email: 'admin@globex.test' });
    const verify = createTokenVerifier({ issuer, audience: AUDIENCE, jwks: provider.publicJwks });
    await expect(verify(accessToken)).resolves.toMatchObject({ email: 'admin@globex.test', tenant: 'globex' });
    expect(provider.publicJwks.keys.every((key) => key.d === undefined)).toBe(true);
  });

  it('rejects a tampered token and a token for another audience', async () => {
    const { accessToken } = await loginWithPkce({ issuer, email: 'member@acme.test' });
    const jwksUrl = `${issuer}/oauth2/v2.0/keys`;
    const verify = createTokenVerifier({ issuer, audience: AUDIENCE, jwksUrl });

    const [header, payload, signature] = accessToken.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...decodeJwt(accessToken), tid: 'globex' }),
    ).toString('base64url');
    const tampered = `${header}.${forged}.${signature}`;
    expect(payload).not.toBe(forged);
    await expect(verify(tampered)).rejects.toThrow(new InvalidTokenError('invalid_signature'));

    const otherAudience = createTokenVerifier({ issuer, audience: 'urn:other:api', jwksUrl });
    await expect(otherAudience(accessToken)).rejects.toMatchObject({ reason: 'wrong_audience', message: 'wrong audience' });

    const otherIssuer = createTokenVerifier({ issuer: 'http://elsewhere.test', audience: AUDIENCE, jwksUrl });
    await expect(otherIssuer(accessToken)).rejects.toMatchObject({ reason: 'wrong_issuer' });

    await expect(verify('not-a-jwt')).rejects.toMatchObject({ reason: 'malformed' });
  });

  it('refreshes into another JWT access token for the same user and audience', async () => {
    const { refreshToken } = await loginWithPkce({ issuer, email: 'member@acme.test' });
    const res = await fetch(`${issuer}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'svc-cli', refresh_token: refreshToken! }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string };
    const verify = createTokenVerifier({ issuer, audience: AUDIENCE, jwks: provider.publicJwks });
    await expect(verify(body.access_token)).resolves.toMatchObject({ email: 'member@acme.test', tenant: 'acme' });
  });

  it('rejects an unknown e-mail address', async () => {
    const attempt = loginWithPkce({ issuer, email: 'nobody@acme.test' });
    await expect(attempt).rejects.toBeInstanceOf(LoginFlowError);
    await expect(attempt).rejects.toMatchObject({ code: 'unknown_user' });
  });

  it('refuses to exchange a code without the PKCE verifier', async () => {
    const pending = await authorizeWithPkce({ issuer, email: 'admin@acme.test' });
    const code = pending.callbackUrl.searchParams.get('code');
    expect(code).toBeTruthy();

    const res = await fetch(`${issuer}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: 'svc-cli',
        code: code!,
        redirect_uri: pending.redirectUri,
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses an authorization request without a code challenge', async () => {
    const url = new URL(`${issuer}/oauth2/v2.0/authorize`);
    url.search = new URLSearchParams({
      client_id: 'svc-cli',
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1:50000/callback',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    const location = new URL(res.headers.get('location') ?? '', issuer);
    expect(location.searchParams.get('error')).toBe('invalid_request');
  });

  it('reports an unreachable provider', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(loginWithPkce({ issuer: `http://127.0.0.1:${port}`, email: 'admin@acme.test' })).rejects.toMatchObject({
      code: 'unreachable',
    });
  });
});
