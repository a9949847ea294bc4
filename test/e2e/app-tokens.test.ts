import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';

const IDP_APPS = '/v4/platform/provisioning/idp-apps';
const REDIRECT_URI = 'http://127.0.0.1:51235/app/callback';

/**
 * The tokens of an app that one tenant registered at the identity provider act only in that
 * tenant: the attack of a tenant admin who adds another tenant's admin to their tenant, registers
 * an app, and has that user sign in to it, then uses the token against the user's own tenant.
 */
describe('tokens of a tenant-registered app', { timeout: 120_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const suffix = randomBytes(4).toString('hex');
  let stack: TestStack;
  let owner: TenantFixture;
  let victim: TenantFixture;
  let appToken: string;
  let clientId: string;

  beforeAll(async () => {
    owner = await createTenantFixture(sql, 'app-owner', { plan: 'team' });
    victim = await createTenantFixture(sql, 'app-victim', { plan: 'team' });
    stack = await startTestStack({ devUsers: [...DEV_USERS, owner.admin, owner.member, victim.admin, victim.member] });

    // The owner's admin invites the victim tenant's admin to the owner tenant by e-mail.
    const user = await stack.request('GET', `/v4/platform/users/by-email?email=${encodeURIComponent(victim.admin.email)}`, { as: owner.admin.email });
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    const added = await stack.request('POST', `/v4/platform/tenants/${owner.id}/users/${user.body.id}/provision`, { as: owner.admin.email });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    // The user accepts: the attack needs no more than a user who agreed to join another tenant.
    const accepted = await stack.request('POST', '/v4/identity/me/provision', { as: victim.admin.email, body: { tenant_id: owner.id } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);

    const app = await stack.request('POST', `/v4/platform/tenants/${owner.id}/apps`, { as: owner.admin.email, body: { name: 'Harvest', key: `harvest-${suffix}` } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const client = await stack.request('POST', IDP_APPS, {
      as: owner.admin.email,
      body: { tenant_id: owner.id, appKey: `harvest-${suffix}`, displayName: 'Harvest', redirectUris: [REDIRECT_URI], tokenEndpointAuthMethod: 'none' },
    });
    expect(client.status, JSON.stringify(client.body)).toBe(201);
    clientId = client.body.clientId;

    const login = await loginWithPkce({ issuer: stack.url, email: victim.admin.email, clientId, redirectUri: REDIRECT_URI, scope: 'openid email profile' });
    appToken = login.accessToken;
    expect(decodeJwt(appToken)).toMatchObject({ client_id: clientId });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it("cannot read or write the user's other tenant through v4 or v3", async () => {
    const read = await stack.request('GET', `/v4/data/resources/${victim.slug}/project`, { token: appToken });
    expect(read.status).toBe(403);
    expect(read.body.error.message).toMatch(/issued to an app, which acts only in the tenant that registered it/);
    const written = await stack.request('POST', `/v4/data/resources/${victim.slug}/project`, { token: appToken, body: { data: { name: 'Planted' } } });
    expect(written.status).toBe(403);
    const byId = await stack.request('GET', `/v4/data/resources/${victim.id}/project`, { token: appToken });
    expect(byId.status).toBe(403);
    const v3 = await stack.request('POST', `${V3}/resources/project`, { token: appToken, headers: { 'x-tenant-id': victim.slug }, body: { name: 'Planted', status: 'active' } });
    expect(v3.status).toBe(403);
    const [planted] = await sql<{ n: number }[]>`select count(*)::int as n from resources where tenant_id = ${victim.id}::uuid and data->>'name' = 'Planted'`;
    expect(planted!.n).toBe(0);
  });

  it('reaches no platform or cross-tenant identity route', async () => {
    const created = await stack.request('POST', `/v4/platform/tenants/${victim.id}/children`, { token: appToken, body: { name: 'Shadow', slug: `shadow-${suffix}` } });
    expect(created.status).toBe(403);
    const memberships = await stack.request('GET', '/v4/identity/tenants', { token: appToken });
    expect(memberships.status).toBe(403);
    const ensure = await stack.request('POST', IDP_APPS, {
      token: appToken,
      body: { tenant_id: victim.id, appKey: `harvest-${suffix}`, displayName: 'Harvest', redirectUris: [REDIRECT_URI] },
    });
    expect(ensure.status).toBe(403);
  });

  it("acts as the user in the app's own tenant, and tells the user who they are", async () => {
    const me = await stack.request('GET', '/v4/identity/me', { token: appToken });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(victim.admin.email);
    expect(me.body.platformRoles).toEqual([]);
    const list = await stack.request('GET', `/v4/data/resources/${owner.slug}/project`, { token: appToken });
    expect(list.status).toBe(200);
    // v3 without a tenant header acts in the app's tenant, not the user's home tenant.
    const v3 = await stack.request('GET', `${V3}/users/me`, { token: appToken });
    expect(v3.status, JSON.stringify(v3.body)).toBe(200);
  });

  it("keeps the platform's own clients acting wherever the user is a member", async () => {
    const own = await stack.request('GET', `/v4/data/resources/${victim.slug}/project`, { as: victim.admin.email });
    expect(own.status).toBe(200);
    const memberships = await stack.request('GET', '/v4/identity/tenants', { as: victim.admin.email });
    expect(memberships.status).toBe(200);
  });

  it('acts only within the scopes its registration was granted: a read-only app cannot write, though its user can', async () => {
    const key = `reader-${suffix}`;
    const redirectUri = 'http://127.0.0.1:51236/reader/callback';
    const app = await stack.request('POST', `/v4/platform/tenants/${owner.id}/apps`, { as: owner.admin.email, body: { name: 'Reader', key } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const registration = { tenant_id: owner.id, appKey: key, displayName: 'Reader', redirectUris: [redirectUri], tokenEndpointAuthMethod: 'none' };
    const client = await stack.request('POST', IDP_APPS, { as: owner.admin.email, body: { ...registration, scopes: ['resources.read'] } });
    expect(client.status, JSON.stringify(client.body)).toBe(201);
    expect(client.body.scopes).toEqual(['resources.read']);
    // Confirming the registration without naming scopes keeps what was granted.
    const confirmed = await stack.request('POST', IDP_APPS, { as: owner.admin.email, body: registration });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.scopes).toEqual(['resources.read']);

    const login = await loginWithPkce({ issuer: stack.url, email: owner.admin.email, clientId: client.body.clientId, redirectUri, scope: 'openid email profile' });
    const readerToken = login.accessToken;
    const read = await stack.request('GET', `/v4/data/resources/${owner.slug}/project`, { token: readerToken });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    const written = await stack.request('POST', `/v4/data/resources/${owner.slug}/project`, { token: readerToken, body: { data: { name: 'Scoped' } } });
    expect(written.status, JSON.stringify(written.body)).toBe(403);
    expect(written.body.error.code).toBe('FORBIDDEN');
    const v3 = await stack.request('POST', `${V3}/resources/project`, { token: readerToken, body: { name: 'Scoped', status: 'active' } });
    expect(v3.status, JSON.stringify(v3.body)).toBe(403);
    const [scoped] = await sql<{ n: number }[]>`select count(*)::int as n from resources where tenant_id = ${owner.id}::uuid and data->>'name' = 'Scoped'`;
    expect(scoped!.n).toBe(0);

    // The same user through the platform's own client writes.
    const own = await stack.request('POST', `/v4/data/resources/${owner.slug}/project`, { as: owner.admin.email, body: { data: { name: 'Own' } } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);

    // A scope that names no permission is refused.
    const unknown = await stack.request('POST', IDP_APPS, { as: owner.admin.email, body: { ...registration, scopes: ['resources.everything'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'scopes.0' } });
  });
});
