import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateSigningJwks } from '../../api-edge/identity/dev-provider.ts';
import { fillPath } from '../harness/routes.ts';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture } from '../harness/tenant-fixture.ts';
import { documentedOperations } from './operations.ts';

/**
 * Forged bearer tokens on every documented operation that asks for authentication: the stack's
 * identity provider signs with keys this file holds, so each forgery differs from a token the
 * platform accepts in exactly one way (the control token, signed the same way, is accepted).
 */
let stack: TestStack;
let privateJwk: JWK;
let genuine: { token: string; header: Record<string, unknown>; claims: JWTPayload };
/** Schemes that take a bearer token: a user's (`bearer`, `oauth2`) or a realtime connection's. */
const BEARER_SCHEMES = ['bearer', 'oauth2', 'realtimeToken'];
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  const jwks = await generateSigningJwks();
  privateJwk = jwks.keys[0] as JWK;
  const plenty = { points: 1_000_000, durationSeconds: 60 };
  stack = await startTestStack({ devSigningKeys: jwks, rateLimits: { policies: { resources: plenty, users: plenty, anonymous: plenty } } });
  const token = await stack.token(ADMIN);
  genuine = { token, header: decodeProtectedHeader(token), claims: decodeJwt(token) };
});
afterAll(() => stack?.close());

/** Signs `claims` with the provider's own key (RS256, its `kid`). */
async function signed(claims: JWTPayload, key: JWK = privateJwk, header: Record<string, unknown> = genuine.header): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ ...header, alg: 'RS256' }).sign(await importJWK(key, 'RS256'));
}

async function forgeries(): Promise<Record<string, string>> {
  const now = Math.floor(Date.now() / 1000);
  const [header, payload, signature] = genuine.token.split('.') as [string, string, string];
  const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
  const { privateKey: strangerKey } = await generateKeyPair('RS256', { extractable: true });
  const stranger = { ...(await exportJWK(strangerKey)), kid: privateJwk.kid };
  // HS256 keyed with the provider's public key: the classic algorithm confusion.
  const { d: _, p: __, q: ___, dp: ____, dq: _____, qi: ______, ...publicJwk } = privateJwk;
  const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
  return {
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    'alg none, signature kept': `${b64({ ...genuine.header, alg: 'none' })}.${payload}.${signature}`,
    'wrong issuer': await signed({ ...genuine.claims, iss: 'https://issuer.invalid' }),
    'wrong audience': await signed({ ...genuine.claims, aud: 'urn:another:api' }),
    'expired an hour ago': await signed({ ...genuine.claims, iat: now - 7200, exp: now - 3600 }),
    'no expiry': await signed(Object.fromEntries(Object.entries(genuine.claims).filter(([k]) => k !== 'exp'))),
    'not valid yet': await signed({ ...genuine.claims, nbf: now + 3600 }),
    'tampered signature': `${header}.${payload}.${flipped}`,
    'tampered claims': `${header}.${b64({ ...genuine.claims, sub: 'someone-else', email: 'admin@globex.test', tid: 'globex' })}.${signature}`,
    'signed by another key with the same kid': await signed(genuine.claims, stranger),
    'HS256 keyed with the public key': await new SignJWT(genuine.claims).setProtectedHeader({ alg: 'HS256', kid: privateJwk.kid }).sign(hmacKey),
  };
}

describe('forged tokens', () => {
  it('the control token, signed the same way as the forgeries, is accepted', async () => {
    const control = await signed(genuine.claims);
    const answer = await stack.request('GET', '/v4/identity/me', { token: control });
    expect(answer.status).toBe(200);
    expect(answer.body.email).toBe(ADMIN);
  });

  it('are 401 UNAUTHORIZED on every documented operation that asks for authentication', { timeout: 120_000 }, async () => {
    const tokens = await forgeries();
    const tenants = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    const acme: string = tenants.body.data.find((t: { slug: string }) => t.slug === 'acme').id;
    // Every operation asks for authentication; all but inbound webhooks (their signature: test/e2e/v4-webhooks.test.ts) take a bearer token.
    expect(documentedOperations().filter((op) => !op.authenticated)).toEqual([]);
    const operations = documentedOperations().filter((op) => op.schemes.some((scheme) => BEARER_SCHEMES.includes(scheme)));
    expect(documentedOperations().filter((op) => !operations.some((o) => o.route === op.route)).map((op) => op.operationId)).toEqual(['receiveWebhook']);
    const accepted: string[] = [];
    for (const operation of operations) {
      const path = fillPath(operation.template, { ...operation.case?.sample, tenantId: acme, ...Object.fromEntries(operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, operation.case?.sample?.[p.name] ?? acme])) });
      const query = operation.case?.query ? `?${operation.case.query}` : '';
      for (const [forgery, token] of Object.entries(tokens)) {
        const answer = await stack.request(operation.method, path + query, { token, body: operation.body?.mediaType === 'application/json' ? (operation.case?.body ?? {}) : undefined });
        if (answer.status !== 401 || answer.body?.error?.code !== 'UNAUTHORIZED') accepted.push(`${forgery}: ${operation.method} ${path} -> ${answer.status}`);
      }
    }
    expect(accepted).toEqual([]);
  });
});

/** Operations on the caller's own profile, which a token issued to an app reaches: the app acts as its user. */
const SELF_OPERATIONS = ['getMe', 'updateProfile'];

describe('tokens issued to an app that another tenant registered', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  afterAll(() => sql.end());

  /**
   * A genuine token of a tenant's administrator (a tenant of this file's own: the profile route
   * may change them), as if issued to a client registered by a tenant the user is no member of.
   */
  async function foreignClientToken(): Promise<{ token: string; tenantId: string }> {
    const victim = await createTenantFixture(sql, 'foreign-victim');
    const other = await createTenantFixture(sql, 'foreign-app');
    const [client] = await sql<{ clientId: string }[]>`
      insert into idp_apps (client_id, tenant_id, app_key, display_name, redirect_uris, token_endpoint_auth_method, provider, issuer)
      values (gen_random_uuid()::text, ${other.id}::uuid, 'foreign', 'Foreign', '{https://foreign.example/cb}', 'none', 'built-in', ${stack.url})
      returning client_id as "clientId"`;
    const { admin } = victim;
    const token = await signed({ ...genuine.claims, sub: admin.sub, email: admin.email, email_verified: true, name: admin.name, tid: victim.slug, client_id: client!.clientId });
    return { token, tenantId: victim.id };
  }

  it('reach nothing but the user\'s own profile, on every documented operation that takes a bearer token', { timeout: 120_000 }, async () => {
    const { token, tenantId } = await foreignClientToken();
    // Without the client's binding the same token acts in the user's tenant.
    const own = await stack.request('GET', `/v4/data/resources/${tenantId}/project`, { token: await signed({ ...decodeJwt(token), client_id: undefined }) });
    expect(own.status).toBe(200);
    const operations = documentedOperations().filter((op) => op.schemes.some((scheme) => BEARER_SCHEMES.includes(scheme)));
    const reached: string[] = [];
    for (const operation of operations) {
      const path = fillPath(operation.template, { ...operation.case?.sample, tenantId, ...Object.fromEntries(operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, operation.case?.sample?.[p.name] ?? tenantId])) });
      const query = operation.case?.query ? `?${operation.case.query}` : '';
      const answer = await stack.request(operation.method, path + query, { token, body: operation.body?.mediaType === 'application/json' ? (operation.case?.body ?? {}) : undefined, conformance: false });
      const refused = answer.status === 401 || answer.status === 403;
      if (SELF_OPERATIONS.includes(operation.operationId) ? answer.status >= 500 : !refused) reached.push(`${operation.operationId}: ${operation.method} ${path} -> ${answer.status}`);
    }
    expect(reached).toEqual([]);
  });
});
