import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { asyncListener } from '../harness/async-listener.ts';

const IDP_APPS = '/v4/platform/provisioning/idp-apps';
const AUDIENCE = 'urn:svc:api';
const INITIAL_ACCESS_TOKEN = `initial-${randomUUID()}`;

interface SeenRequest {
  method: string;
  path: string;
  authorization?: string;
  body?: Record<string, any>;
}

/**
 * An external OIDC provider as the platform sees one: discovery, JWKS, and dynamic client
 * registration as RFC 7591 (POST to the registration endpoint, with an initial access token) and
 * RFC 7592 (PUT to the client's registration URI, with its registration access token) specify
 * them. No such provider runs here, so this local server speaks their documented wire format.
 */
async function startExternalProvider() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'external-1', alg: 'RS256', use: 'sig' };
  const state = {
    offerRegistration: false,
    /** Answer the next registration with this status instead. */
    failWith: undefined as number | undefined,
    seen: [] as SeenRequest[],
    clients: new Map<string, { metadata: Record<string, any>; secret?: string; accessToken: string }>(),
  };
  let issuer = '';

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? (JSON.parse(text) as Record<string, any>) : undefined;
  };
  /** RFC 7591 §3.2.1: the client's metadata, its credentials and what manages it. */
  const registrationAnswer = (clientId: string) => {
    const client = state.clients.get(clientId)!;
    return {
      ...client.metadata,
      client_id: clientId,
      ...(client.secret ? { client_secret: client.secret, client_secret_expires_at: 0 } : {}),
      registration_access_token: client.accessToken,
      registration_client_uri: `${issuer}/connect/register/${clientId}`,
    };
  };

  const server: Server = createServer(asyncListener(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const body = req.method === 'POST' || req.method === 'PUT' ? await readBody(req) : undefined;
    state.seen.push({ method: req.method!, path, authorization: req.headers.authorization, body });
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      return send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        ...(state.offerRegistration ? { registration_endpoint: `${issuer}/connect/register` } : {}),
      });
    }
    if (req.method === 'GET' && path === '/jwks') return send(res, 200, { keys: [jwk] });
    if (req.method === 'POST' && path === '/connect/register' && state.offerRegistration) {
      if (req.headers.authorization !== `Bearer ${INITIAL_ACCESS_TOKEN}`) return send(res, 401, { error: 'invalid_token' });
      if (state.failWith) return send(res, state.failWith, { error: 'server_error' });
      const uris: string[] = body?.redirect_uris ?? [];
      if (uris.some((uri) => uri.includes('refused.example.test'))) {
        return send(res, 400, { error: 'invalid_redirect_uri', error_description: 'redirect URIs on refused.example.test are not allowed' });
      }
      const clientId = `ext-${randomBytes(6).toString('hex')}`;
      const secret = body?.token_endpoint_auth_method === 'none' ? undefined : randomBytes(24).toString('base64url');
      const { client_id: _ignored, ...metadata } = body ?? {};
      state.clients.set(clientId, { metadata, secret, accessToken: randomBytes(24).toString('base64url') });
      return send(res, 201, registrationAnswer(clientId));
    }
    const managed = /^\/connect\/register\/([\w-]+)$/.exec(path);
    const client = managed ? state.clients.get(managed[1]!) : undefined;
    if (req.method === 'PUT' && client) {
      if (req.headers.authorization !== `Bearer ${client.accessToken}`) return send(res, 401, { error: 'invalid_token' });
      if (body?.client_id !== managed![1]) return send(res, 400, { error: 'invalid_client_metadata', error_description: 'client_id does not match' });
      const { client_id: _ignored, ...metadata } = body!;
      client.metadata = metadata;
      return send(res, 200, registrationAnswer(managed![1]!));
    }
    send(res, 404, { error: 'not_found' });
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** An access token of this provider, as the platform's edge verifies it: issued to the platform's CLI. */
  const token = (claims: { sub: string; email: string; tid: string }) =>
    new SignJWT({ email: claims.email, email_verified: true, name: 'External Admin', tid: claims.tid, azp: 'svc-cli' })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
      .setSubject(claims.sub)
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);

  return {
    get issuer() {
      return issuer;
    },
    state,
    token,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** v4 identity-provider apps with an external OIDC provider configured instead of the built-in one. */
describe('v4 identity-provider apps (external provider)', { timeout: 120_000 }, () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `ext-idp-${suffix}`;
  const appKey = `portal-${suffix}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let provider: Awaited<ReturnType<typeof startExternalProvider>>;
  let stack: TestStack;
  let tenantId: string;
  let adminToken: string;

  const ensure = (body: unknown) => stack.request('POST', IDP_APPS, { token: adminToken, body });
  const registrations = () => provider.state.seen.filter((r) => r.path.startsWith('/connect/register'));
  const clientRows = async () => (await sql<{ n: number }[]>`select count(*)::int as n from idp_apps where tenant_id = ${tenantId}::uuid`)[0]!.n;

  beforeAll(async () => {
    provider = await startExternalProvider();
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    tenantId = tenant!.id;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
    }
    const email = `ext-admin-${suffix}@ext.test`;
    const [user] = await sql<{ id: string }[]>`insert into users (email, name) values (${email}, 'External Admin') returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${user!.id}::uuid, '{tenant-admin}')`;
    adminToken = await provider.token({ sub: `ext|${randomUUID()}`, email, tid: slug });
    stack = await startTestStack({
      identity: { issuer: provider.issuer, audience: AUDIENCE, jwksUrl: `${provider.issuer}/jwks`, registrationToken: INITIAL_ACCESS_TOKEN },
    });
    const app = await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { token: adminToken, body: { name: 'Portal', key: appKey } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    await provider?.close();
  });

  const body = { tenant_id: slug, appKey, displayName: 'Portal', redirectUris: ['https://portal.example.test/callback'] };

  it('answers 501 when the provider offers no dynamic client registration, and stores nothing', async () => {
    provider.state.offerRegistration = false;
    const refused = await ensure(body);
    expect(refused.status).toBe(501);
    expect(refused.body.error.code).toBe('NOT_IMPLEMENTED');
    expect(refused.body.error.message).toContain('RFC 7591');
    expect(refused.body.error.details).toEqual({ issuer: provider.issuer });
    expect(registrations()).toEqual([]);
    expect(await clientRows()).toBe(0);
  });

  it('registers the client at the provider (RFC 7591) and passes its secret on once, keeping none', async () => {
    provider.state.offerRegistration = true;
    const created = await ensure(body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [registration] = registrations();
    expect(registration).toMatchObject({
      method: 'POST',
      authorization: `Bearer ${INITIAL_ACCESS_TOKEN}`,
      body: {
        client_name: 'Portal',
        redirect_uris: ['https://portal.example.test/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        application_type: 'web',
      },
    });
    const stored = provider.state.clients.get(created.body.clientId)!;
    expect(created.body).toMatchObject({ tenantId, appKey, provider: 'external', issuer: provider.issuer, clientSecret: stored.secret, tokenEndpointAuthMethod: 'client_secret_basic' });
    const [row] = await sql<{ secret_hash: string | null }[]>`select secret_hash from idp_apps where client_id = ${created.body.clientId}`;
    expect(row!.secret_hash).toBeNull();
    const [management] = await sql`select registration_client_uri, registration_access_token from idp_app_registrations where client_id = ${created.body.clientId}`;
    expect(management).toEqual({ registration_client_uri: `${provider.issuer}/connect/register/${created.body.clientId}`, registration_access_token: stored.accessToken });

    // Confirmed without asking the provider again, and without the secret.
    const confirmed = await ensure(body);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.clientId).toBe(created.body.clientId);
    expect(confirmed.body.clientSecret).toBeUndefined();
    expect(registrations()).toHaveLength(1);

    // A change goes to the provider through registration management (RFC 7592).
    const changed = await ensure({ ...body, redirectUris: ['https://portal.example.test/callback', 'http://localhost/cb'] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.redirectUris).toEqual(['https://portal.example.test/callback', 'http://localhost/cb']);
    const update = registrations()[1]!;
    expect(update).toMatchObject({
      method: 'PUT',
      path: `/connect/register/${created.body.clientId}`,
      authorization: `Bearer ${stored.accessToken}`,
      body: { client_id: created.body.clientId, redirect_uris: ['https://portal.example.test/callback', 'http://localhost/cb'] },
    });
    expect(stored.metadata.redirect_uris).toEqual(['https://portal.example.test/callback', 'http://localhost/cb']);
  });

  it('answers 501 to a secret rotation: the provider keeps the secret', async () => {
    const [row] = await sql<{ client_id: string }[]>`select client_id from idp_apps where tenant_id = ${tenantId}::uuid and app_key = ${appKey}`;
    const secretBefore = provider.state.clients.get(row!.client_id)!.secret;
    const refused = await stack.request('POST', `${IDP_APPS}/${row!.client_id}/rotate-secret`, { token: adminToken });
    expect(refused.status).toBe(501);
    expect(refused.body.error.code).toBe('NOT_IMPLEMENTED');
    expect(provider.state.clients.get(row!.client_id)!.secret).toBe(secretBefore);
  });

  it("passes on the provider's refusal of the metadata as 400, its failures as 502, and stores nothing", async () => {
    const key = `refused-${suffix}`;
    expect((await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { token: adminToken, body: { name: 'Refused', key } })).status).toBe(201);
    const before = await clientRows();
    const refused = await ensure({ ...body, appKey: key, redirectUris: ['https://refused.example.test/cb'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'redirect_uris' } });
    expect(refused.body.error.details.issue).toContain('refused.example.test');

    provider.state.failWith = 500;
    try {
      const failed = await ensure({ ...body, appKey: key });
      expect(failed.status).toBe(502);
      expect(failed.body.error.code).toBe('BAD_GATEWAY');
    } finally {
      provider.state.failWith = undefined;
    }
    expect(await clientRows()).toBe(before);
  });
});
