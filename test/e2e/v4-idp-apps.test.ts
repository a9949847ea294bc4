import { randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { authorizeWithPkce } from '../../api-edge/identity/login-flow.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
const IDP_APPS = '/v4/platform/provisioning/idp-apps';
const APP_KEYS = ['appKey', 'clientId', 'createdAt', 'displayName', 'issuer', 'provider', 'redirectUris', 'scopes', 'secretRotatedAt', 'tenantId', 'tokenEndpointAuthMethod', 'updatedAt'];

/**
 * v4 identity-provider apps with the built-in provider: an app's OAuth client is created once and
 * confirmed after, signs a user in at once through the provider's real endpoints (authorization
 * code with PKCE), and a rotated secret replaces the old one at the token endpoint at once.
 */
describe('v4 identity-provider apps (built-in provider)', { timeout: 120_000 }, () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `idp-${suffix}`;
  const admin = { sub: randomUUID(), email: `idp-admin-${suffix}@idp.test`, name: 'Idp Admin', tenant: slug };
  const member = { sub: randomUUID(), email: `idp-member-${suffix}@idp.test`, name: 'Idp Member', tenant: slug };
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenantId: string;
  const appKey = `field-${suffix}`;
  const redirectUri = 'https://field.example.test/auth/callback';

  const ensure = (body: unknown, as = admin.email) => stack.request('POST', IDP_APPS, { as, body });
  const rotate = (clientId: string, as = admin.email, body?: unknown) => stack.request('POST', `${IDP_APPS}/${encodeURIComponent(clientId)}/rotate-secret`, { as, body });
  const clientRows = async () => (await sql<{ n: number }[]>`select count(*)::int as n from idp_apps where tenant_id = ${tenantId}::uuid`)[0]!.n;

  /** The front channel through the provider's real pages, up to the redirect URI: the code and its verifier. */
  async function authorize(clientId: string, uri = redirectUri) {
    const pending = await authorizeWithPkce({ issuer: stack.url, email: admin.email, clientId, redirectUri: uri, scope: 'openid email profile' });
    const code = pending.callbackUrl.searchParams.get('code');
    expect(code).toBeTruthy();
    return { code: code!, verifier: pending.codeVerifier, redirectUri: pending.redirectUri };
  }

  /** The token endpoint, authenticating the client as `method` says. */
  async function exchange(grant: { code: string; verifier: string; redirectUri: string }, client: { id: string; secret?: string; method: string }) {
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, redirect_uri: grant.redirectUri, code_verifier: grant.verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (client.method === 'client_secret_basic') {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret ?? '')}`).toString('base64')}`;
    } else {
      form.set('client_id', client.id);
      if (client.method === 'client_secret_post') form.set('client_secret', client.secret ?? '');
    }
    const response = await fetch(`${stack.url}/oauth2/v2.0/token`, { method: 'POST', headers, body: form });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  beforeAll(async () => {
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region, plan) values (${slug}, ${slug}, 'eu', 'team') returning id::text as id`;
    tenantId = tenant!.id;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
    }
    for (const [user, roles] of [[admin, ['tenant-admin']], [member, ['member']]] as const) {
      const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
      await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${row!.id}::uuid, ${roles})`;
    }
    stack = await startTestStack({ devUsers: [...DEV_USERS, admin, member] });
    const app = await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Field', key: appKey } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  let client: { id: string; secret: string };

  it('creates the client once, with its secret shown only then and stored only as a hash', async () => {
    const created = await ensure({ tenant_id: slug, appKey, displayName: 'Field app', redirectUris: [redirectUri, redirectUri] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...APP_KEYS, 'clientSecret'].sort());
    expect(created.body).toMatchObject({
      tenantId,
      appKey,
      displayName: 'Field app',
      redirectUris: [redirectUri],
      scopes: null,
      tokenEndpointAuthMethod: 'client_secret_basic',
      provider: 'built-in',
      issuer: stack.url,
    });
    expect(created.body.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.headers.get('cache-control')).toBe('no-store');
    client = { id: created.body.clientId, secret: created.body.clientSecret };

    const [row] = await sql<{ secret_hash: string }[]>`select secret_hash from idp_apps where client_id = ${client.id}`;
    expect(row!.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(row!.secret_hash).not.toContain(client.secret);

    // Confirmed: the same client, no secret; the name and redirect URIs follow the request.
    const confirmed = await ensure({ tenant_id: tenantId, appKey, displayName: 'Field app', redirectUris: [redirectUri] });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ ...created.body, clientSecret: undefined, updatedAt: created.body.updatedAt });
    expect(confirmed.body.clientSecret).toBeUndefined();
    const second = 'http://127.0.0.1/field/callback';
    const changed = await stack.request('POST', `${IDP_APPS}?tenant_id=${slug}`, { as: admin.email, body: { appKey, displayName: 'Field', redirectUris: [redirectUri, second] } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ clientId: client.id, displayName: 'Field', redirectUris: [redirectUri, second] });
    expect(changed.body.clientSecret).toBeUndefined();
    expect(await clientRows()).toBe(1);
  });

  it('signs a user in with the new client at once: authorize, code, token with the secret; the token works on the API', async () => {
    const grant = await authorize(client.id);
    const tokens = await exchange(grant, { id: client.id, secret: client.secret, method: 'client_secret_basic' });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer' });
    expect(decodeJwt(tokens.body.access_token)).toMatchObject({ client_id: client.id, iss: stack.url });
    expect(decodeJwt(tokens.body.id_token)).toMatchObject({ aud: client.id, email: admin.email });
    const me = await stack.request('GET', '/v4/identity/me', { token: tokens.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(admin.email);

    // A wrong secret, or none, is refused; a redirect URI the client did not register never gets a code.
    const again = await authorize(client.id);
    expect((await exchange(again, { id: client.id, secret: 'not-the-secret', method: 'client_secret_basic' })).body.error).toBe('invalid_client');
    expect((await exchange(again, { id: client.id, method: 'none' })).status).toBe(401);
    await expect(authorize(client.id, 'https://elsewhere.example.test/callback')).rejects.toThrow();
  });

  it('rotates the secret: the new one is shown once, the old one works for an hour at the token endpoint, then fails', async () => {
    const rotated = await rotate(client.id);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body).toMatchObject({ clientId: client.id, tenantId, appKey });
    expect(rotated.body.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.clientSecret).not.toBe(client.secret);
    expect(rotated.body.secretRotatedAt).not.toBeNull();

    const within = await exchange(await authorize(client.id), { id: client.id, secret: client.secret, method: 'client_secret_basic' });
    expect(within.status, JSON.stringify(within.body)).toBe(200);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.secretRotatedAt)).toBe(3600 * 1000);
    const renewed = await exchange(await authorize(client.id), { id: client.id, secret: rotated.body.clientSecret, method: 'client_secret_basic' });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);

    // The hour has passed (its end moved back rather than waited for).
    await sql`update idp_apps set previous_secret_expires_at = now() - interval '1 second' where client_id = ${client.id}`;
    const grant = await authorize(client.id);
    const old = await exchange(grant, { id: client.id, secret: client.secret, method: 'client_secret_basic' });
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    // The code was not spent by the refused exchange: the new secret redeems it.
    const fresh = await exchange(grant, { id: client.id, secret: rotated.body.clientSecret, method: 'client_secret_basic' });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(typeof fresh.body.access_token).toBe('string');

    // Confirming never shows the secret again.
    const confirmed = await ensure({ tenant_id: tenantId, appKey, displayName: 'Field', redirectUris: [redirectUri, 'http://127.0.0.1/field/callback'] });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.clientSecret).toBeUndefined();
    client = { id: client.id, secret: rotated.body.clientSecret };
  });

  it('rotates the secret with revokePrevious (a leaked secret): the old one fails at the token endpoint at once', async () => {
    const rotated = await rotate(client.id, admin.email, { revokePrevious: true });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const grant = await authorize(client.id);
    const old = await exchange(grant, { id: client.id, secret: client.secret, method: 'client_secret_basic' });
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    const fresh = await exchange(grant, { id: client.id, secret: rotated.body.clientSecret, method: 'client_secret_basic' });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(rotated.body.previousSecretExpiresAt).toBeNull();

    // A bad option is refused, and rotates nothing.
    const hashBefore = (await sql<{ h: string }[]>`select secret_hash as h from idp_apps where client_id = ${client.id}`)[0]!.h;
    for (const body of [{ revokePrevious: 'yes' }, { overlapSeconds: 60 }]) {
      const refused = await rotate(client.id, admin.email, body);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    }
    expect((await sql<{ h: string }[]>`select secret_hash as h from idp_apps where client_id = ${client.id}`)[0]!.h).toBe(hashBefore);
    client = { id: client.id, secret: rotated.body.clientSecret };
  });

  it('registers public clients (PKCE alone) and client_secret_post clients; a public client has no secret to rotate', async () => {
    const app = await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Kiosk', key: `kiosk-${suffix}` } });
    expect(app.status).toBe(201);
    const loopback = 'http://127.0.0.1/kiosk/callback';
    const kiosk = await ensure({ tenant_id: tenantId, appKey: `kiosk-${suffix}`, displayName: 'Kiosk', redirectUris: [loopback], tokenEndpointAuthMethod: 'none' });
    expect(kiosk.status, JSON.stringify(kiosk.body)).toBe(201);
    expect(kiosk.body.clientSecret).toBeUndefined();
    // A loopback client is a native app: any port matches (RFC 8252).
    const grant = await authorize(kiosk.body.clientId, 'http://127.0.0.1:51234/kiosk/callback');
    const tokens = await exchange(grant, { id: kiosk.body.clientId, method: 'none' });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const refused = await rotate(kiosk.body.clientId);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'tokenEndpointAuthMethod' } });
    // Its kind never changes on a confirmation.
    const switched = await ensure({ tenant_id: tenantId, appKey: `kiosk-${suffix}`, displayName: 'Kiosk', redirectUris: [loopback] });
    expect(switched.status).toBe(409);
    expect(switched.body.error.details).toMatchObject({ field: 'token_endpoint_auth_method', current: 'none' });

    const postApp = await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Poster', key: `poster-${suffix}` } });
    expect(postApp.status).toBe(201);
    const poster = await ensure({ tenant_id: tenantId, appKey: `poster-${suffix}`, displayName: 'Poster', redirectUris: [redirectUri], tokenEndpointAuthMethod: 'client_secret_post' });
    expect(poster.status).toBe(201);
    const posted = await exchange(await authorize(poster.body.clientId), { id: poster.body.clientId, secret: poster.body.clientSecret, method: 'client_secret_post' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
  });

  it("is for the tenant's administrators and platform administrators; others change nothing", async () => {
    const otherKey = `other-${suffix}`;
    const app = await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Other', key: otherKey } });
    expect(app.status).toBe(201);
    const body = { tenant_id: tenantId, appKey: otherKey, displayName: 'Other', redirectUris: [redirectUri] };
    const before = await clientRows();
    const byMember = await ensure(body, member.email);
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.code).toBe('FORBIDDEN');
    const byGlobex = await ensure(body, GLOBEX_ADMIN);
    expect(byGlobex.status).toBe(403);
    expect((await stack.request('POST', IDP_APPS, { body })).status).toBe(401);
    expect(await clientRows()).toBe(before);

    // Another tenant's client is not found by its administrators; a member sees it but may not rotate.
    const rotatedAt = async () => (await sql<{ at: string }[]>`select secret_hash as at from idp_apps where client_id = ${client.id}`)[0]!.at;
    const hashBefore = await rotatedAt();
    expect((await rotate(client.id, GLOBEX_ADMIN)).status).toBe(404);
    const memberRotate = await rotate(client.id, member.email);
    expect(memberRotate.status).toBe(403);
    expect(memberRotate.body.error.code).toBe('FORBIDDEN');
    expect((await rotate(randomUUID())).status).toBe(404);
    expect(await rotatedAt()).toBe(hashBefore);

    // A platform administrator, no member of the tenant, may.
    const byPlatform = await ensure(body, PLATFORM_ADMIN);
    expect(byPlatform.status, JSON.stringify(byPlatform.body)).toBe(201);
    expect((await rotate(byPlatform.body.clientId, PLATFORM_ADMIN)).status).toBe(200);
  });

  it('refuses bad input with 400 naming the field, an app not enrolled with 404, and changes nothing', async () => {
    const before = await clientRows();
    const good = { tenant_id: tenantId, appKey, displayName: 'Field', redirectUris: [redirectUri] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, appKey: undefined }, 'app_key'],
      [{ ...good, appKey: 'Not Kebab' }, 'app_key'],
      [{ ...good, displayName: '  ' }, 'display_name'],
      [{ ...good, redirectUris: [] }, 'redirect_uris'],
      [{ ...good, redirectUris: 'https://a.example/cb' }, 'redirect_uris'],
      [{ ...good, redirectUris: ['http://field.example.test/callback'] }, 'redirect_uris.0'],
      [{ ...good, redirectUris: ['https://field.example.test/callback#frag'] }, 'redirect_uris.0'],
      [{ ...good, redirectUris: ['javascript:alert(1)'] }, 'redirect_uris.0'],
      [{ ...good, redirectUris: ['/relative'] }, 'redirect_uris.0'],
      [{ ...good, redirectUris: ['https://user:pw@field.example.test/cb'] }, 'redirect_uris.0'],
      [{ ...good, redirectUris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) }, 'redirect_uris'],
      [{ ...good, tokenEndpointAuthMethod: 'private_key_jwt' }, 'token_endpoint_auth_method'],
      [{ ...good, clientSecret: 'mine' }, 'clientSecret'],
      [{ ...good, tenant_id: undefined }, 'tenant_id'],
    ];
    for (const [body, field] of cases) {
      const refused = await ensure(JSON.parse(JSON.stringify(body)));
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    const both = await stack.request('POST', `${IDP_APPS}?tenant_id=${tenantId}`, { as: admin.email, body: good });
    expect(both.status).toBe(400);
    expect(both.body.error.details.field).toBe('tenant_id');
    expect((await stack.request('POST', IDP_APPS, { as: admin.email, rawBody: '{"appKey":' })).status).toBe(400);
    expect((await stack.request('POST', `${IDP_APPS}/${'x'.repeat(300)}/rotate-secret`, { as: admin.email })).status).toBe(400);
    const unknownApp = await ensure({ ...good, appKey: `never-enrolled-${suffix}` });
    expect(unknownApp.status).toBe(404);
    expect(unknownApp.body.error.code).toBe('NOT_FOUND');
    expect((await ensure({ ...good, tenant_id: `no-such-${suffix}` }, PLATFORM_ADMIN)).status).toBe(404);
    expect(await clientRows()).toBe(before);
  });

  it('consults the identity.apps capability: refused for the tenant, or beyond its maxClients, is 403 naming it', async () => {
    const key = `limited-${suffix}`;
    expect((await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Limited', key } })).status).toBe(201);
    const body = { tenant_id: tenantId, appKey: key, displayName: 'Limited', redirectUris: [redirectUri] };
    const override = `/v4/platform/capabilities/overrides/${tenantId}/identity.apps`;
    try {
      expect((await stack.request('PUT', override, { as: PLATFORM_ADMIN, body: { allowed: false, reason: 'no apps here' } })).status).toBe(200);
      const refused = await ensure(body);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('identity.apps');
      const count = await clientRows();
      expect((await stack.request('PUT', override, { as: PLATFORM_ADMIN, body: { allowed: true, limits: { maxClients: count }, reason: 'capped' } })).status).toBe(200);
      const capped = await ensure(body);
      expect(capped.status).toBe(403);
      expect(capped.body.error.message).toMatch(/identity\.apps allows this tenant at most \d+/);
      expect(await clientRows()).toBe(count);
      // Confirming a client the tenant has is not another client.
      expect((await ensure({ tenant_id: tenantId, appKey, displayName: 'Field', redirectUris: [redirectUri] })).status).toBe(200);
    } finally {
      await stack.request('DELETE', override, { as: PLATFORM_ADMIN });
    }
    expect((await ensure(body)).status).toBe(201);
  });

  it('makes one client for concurrent first calls', async () => {
    const key = `racing-${suffix}`;
    expect((await stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as: admin.email, body: { name: 'Racing', key } })).status).toBe(201);
    const body = { tenant_id: tenantId, appKey: key, displayName: 'Racing', redirectUris: [redirectUri] };
    const answers = await Promise.all([ensure(body), ensure(body), ensure(body)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.clientId)).size).toBe(1);
    expect(answers.filter((a) => a.body.clientSecret).length).toBe(1);
  });
});
