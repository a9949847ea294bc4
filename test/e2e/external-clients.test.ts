import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startKeyServer, type KeyServer } from '../harness/key-server.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';

const AUDIENCE = 'urn:svc:api';

/**
 * With an external identity provider, a token that names no client (neither `client_id` nor
 * `azp`) could be a tenant-registered app's, escaping that app's tenant and scopes: it is refused
 * unless the operator says the provider's unnamed tokens are the platform's own. The platform's own
 * clients are named in configuration; a client neither named there nor registered by a tenant is
 * refused too.
 */
describe('clients of an external identity provider', { timeout: 120_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let keys: KeyServer;
  let stack: TestStack;
  let tenant: TenantFixture;

  const identityOf = (user: { sub: string; email: string }) => ({ sub: user.sub, email: user.email, email_verified: true, name: 'External User' });
  const users = async (email: string) => (await sql<{ n: number }[]>`select count(*)::int as n from users where email = ${email}`)[0]!.n;

  beforeAll(async () => {
    keys = await startKeyServer('clients-1');
    tenant = await createTenantFixture(sql, 'ext-clients');
    stack = await startTestStack({ identity: { issuer: keys.issuer, audience: AUDIENCE, jwksUrl: keys.jwksUrl, firstPartyClients: ['svc-cli', 'svc-bff'] } });
  });
  afterAll(async () => {
    await stack?.close();
    await keys?.close();
    await sql.end();
  });

  it('refuses a token naming no client with 401 saying so, and provisions nobody', async () => {
    const stranger = { sub: `ext|${randomUUID()}`, email: `unnamed-${randomBytes(4).toString('hex')}@ext.test` };
    const token = await keys.sign(identityOf(stranger));
    const me = await stack.request('GET', '/v4/identity/me', { token });
    expect(me.status, JSON.stringify(me.body)).toBe(401);
    expect(me.body.error.code).toBe('UNAUTHORIZED');
    expect(me.body.error.message).toMatch(/names no client \(neither client_id nor azp\)/);
    const member = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: await keys.sign(identityOf(tenant.admin)) });
    expect(member.status, JSON.stringify(member.body)).toBe(401);
    expect(await users(stranger.email)).toBe(0);
  });

  it("accepts the platform's own clients, named by azp or client_id", async () => {
    const cli = await keys.sign({ ...identityOf(tenant.admin), azp: 'svc-cli' });
    const listed = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: cli });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const bff = await keys.sign({ ...identityOf(tenant.admin), client_id: 'svc-bff' });
    const me = await stack.request('GET', '/v4/identity/me', { token: bff });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.email).toBe(tenant.admin.email);
  });

  it('refuses a client that is neither one of the platform\'s own nor an app a tenant registered, and binds a registered one to its tenant', async () => {
    const stranger = await keys.sign({ ...identityOf(tenant.admin), azp: 'someone-elses-client' });
    const refused = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: stranger });
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body.error.message).toMatch(/issued to client "someone-elses-client", which is neither one of the platform's own clients/);

    const [client] = await sql<{ clientId: string }[]>`
      insert into idp_apps (client_id, tenant_id, app_key, display_name, redirect_uris, token_endpoint_auth_method, provider, issuer)
      values (${`ext-${randomBytes(6).toString('hex')}`}, ${tenant.id}::uuid, 'registered', 'Registered', '{https://registered.example/cb}', 'none', 'external', ${keys.issuer})
      returning client_id as "clientId"`;
    const app = await keys.sign({ ...identityOf(tenant.admin), azp: client!.clientId });
    const inTenant = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token: app });
    expect(inTenant.status, JSON.stringify(inTenant.body)).toBe(200);
    const memberships = await stack.request('GET', '/v4/identity/tenants', { token: app });
    expect(memberships.status, JSON.stringify(memberships.body)).toBe(403);
  });
});

describe('an external identity provider whose tokens name no client, configured as first-party', { timeout: 120_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let keys: KeyServer;
  let stack: TestStack;
  let tenant: TenantFixture;

  beforeAll(async () => {
    keys = await startKeyServer('clients-1');
    tenant = await createTenantFixture(sql, 'ext-unnamed');
    stack = await startTestStack({ identity: { issuer: keys.issuer, audience: AUDIENCE, jwksUrl: keys.jwksUrl, tokensWithoutClient: 'first-party' } });
  });
  afterAll(async () => {
    await stack?.close();
    await keys?.close();
    await sql.end();
  });

  it('lets such a token act as a first-party one (AUTH_TOKENS_WITHOUT_CLIENT=first-party)', async () => {
    const token = await keys.sign({ sub: tenant.admin.sub, email: tenant.admin.email, email_verified: true, name: 'External User' });
    const listed = await stack.request('GET', `/v4/data/resources/${tenant.slug}/project`, { token });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const memberships = await stack.request('GET', '/v4/identity/tenants', { token });
    expect(memberships.status, JSON.stringify(memberships.body)).toBe(200);
  });
});
