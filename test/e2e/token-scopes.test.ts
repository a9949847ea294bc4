import { randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateSigningJwks } from '../../api-edge/identity/dev-provider.ts';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';

const IDP_APPS = '/v4/platform/provisioning/idp-apps';
const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * A token's own `scope` claim (RFC 9068, space-separated) narrows what it may do: a client that
 * asked the provider for `resources.read` alone holds a token that cannot write, whatever its
 * user's roles or its app's registration allow. The stack's provider signs with keys this file
 * holds, so each token differs from one the provider issued in its `scope` alone.
 */
describe('the scope claim of an access token', { timeout: 120_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const suffix = randomBytes(4).toString('hex');
  let stack: TestStack;
  let tenant: TenantFixture;
  let privateJwk: JWK;

  beforeAll(async () => {
    const jwks = await generateSigningJwks();
    privateJwk = jwks.keys[0] as JWK;
    tenant = await createTenantFixture(sql, 'token-scopes', { plan: 'team' });
    stack = await startTestStack({ devSigningKeys: jwks, devUsers: [...DEV_USERS, tenant.admin, tenant.member] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  /** The provider's own token for `email`, with `changes` to its claims, signed with the provider's key. */
  async function reissued(email: string, changes: JWTPayload): Promise<string> {
    const genuine = await stack.token(email);
    return new SignJWT({ ...decodeJwt(genuine), ...changes })
      .setProtectedHeader({ ...decodeProtectedHeader(genuine), alg: 'RS256' })
      .sign(await importJWK(privateJwk, 'RS256'));
  }
  const planted = async (name: string) =>
    (await sql<{ n: number }[]>`select count(*)::int as n from resources where tenant_id = ${tenant.id}::uuid and data->>'name' = ${name}`)[0]!.n;

  it('lets a first-party token whose scope names resources.read read but not write, though its user can', async () => {
    const reader = await reissued(tenant.admin.email, { scope: 'openid email resources.read' });
    const read = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: reader });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    const written = await stack.request('POST', `/v4/data/resources/${tenant.slug}/project`, { token: reader, body: { data: { name: 'Narrowed' } } });
    expect(written.status, JSON.stringify(written.body)).toBe(403);
    expect(written.body.error.code).toBe('FORBIDDEN');
    const v3 = await stack.request('POST', `${V3}/resources/project`, { token: reader, headers: { 'x-tenant-id': tenant.slug }, body: { name: 'Narrowed', status: 'active' } });
    expect(v3.status, JSON.stringify(v3.body)).toBe(403);
    expect(await planted('Narrowed')).toBe(0);

    // The same user's token as the provider issued it (its scope names no permission) writes.
    const own = await stack.request('POST', `/v4/data/resources/${tenant.slug}/project`, { as: tenant.admin.email, body: { data: { name: 'Whole' } } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    // A token with no scope claim at all acts with its user's permissions, as before.
    const unscoped = await reissued(tenant.admin.email, { scope: undefined });
    const whole = await stack.request('POST', `/v4/data/resources/${tenant.slug}/project`, { token: unscoped, body: { data: { name: 'Whole' } } });
    expect(whole.status, JSON.stringify(whole.body)).toBe(201);
  });

  it("narrows an app's token below the scopes its registration was granted", async () => {
    const key = `writer-${suffix}`;
    const app = await stack.request('POST', `/v4/platform/tenants/${tenant.id}/apps`, { as: tenant.admin.email, body: { name: 'Writer', key } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const client = await stack.request('POST', IDP_APPS, {
      as: tenant.admin.email,
      body: { tenant_id: tenant.id, appKey: key, displayName: 'Writer', redirectUris: ['http://127.0.0.1:51237/writer/callback'], tokenEndpointAuthMethod: 'none', scopes: ['resources.create', 'resources.read'] },
    });
    expect(client.status, JSON.stringify(client.body)).toBe(201);

    const granted = await reissued(tenant.admin.email, { client_id: client.body.clientId, azp: client.body.clientId, scope: 'openid resources.read resources.create' });
    const created = await stack.request('POST', `/v4/data/resources/${tenant.slug}/project`, { token: granted, body: { data: { name: 'By the app' } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const narrower = await reissued(tenant.admin.email, { client_id: client.body.clientId, azp: client.body.clientId, scope: 'openid resources.read' });
    const written = await stack.request('POST', `/v4/data/resources/${tenant.slug}/project`, { token: narrower, body: { data: { name: 'Narrower app' } } });
    expect(written.status, JSON.stringify(written.body)).toBe(403);
    expect(await planted('Narrower app')).toBe(0);
    // A scope the registration did not grant adds nothing: the token acts within both.
    const wider = await reissued(tenant.admin.email, { client_id: client.body.clientId, azp: client.body.clientId, scope: 'resources.read resources.delete' });
    const listed = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: wider });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const victim = listed.body.data[0];
    const deleted = await stack.request('DELETE', `/v4/data/resources/${tenant.slug}/project/${victim.id}`, { token: wider });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(403);
  });

  it("keeps a platform administrator's narrowed token from platform permissions it does not name", async () => {
    const body = { allowed: true, reason: 'scope test' };
    const path = `/v4/platform/capabilities/overrides/${tenant.id}/ai.chat`;
    const narrowed = await reissued(PLATFORM_ADMIN, { scope: 'openid resources.read' });
    const refused = await stack.request('PUT', path, { token: narrowed, body });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    const named = await reissued(PLATFORM_ADMIN, { scope: 'openid platform.tenants.manage' });
    const allowed = await stack.request('PUT', path, { token: named, body });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect((await stack.request('DELETE', path, { as: PLATFORM_ADMIN })).status).toBe(204);
  });
});
