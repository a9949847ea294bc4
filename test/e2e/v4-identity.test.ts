import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/** v4 identity: the caller's record and profile, their tenants, and self-provisioning by e-mail domain. */
describe('v4 identity', () => {
  const run = randomUUID().slice(0, 8);
  const domain = `joiners-${run}.example`;
  const joiner = { sub: randomUUID(), email: `joiner@${domain}`, name: 'Joiner' };
  const unverified = { sub: randomUUID(), email: `unverified@${domain}`, name: 'Unverified', emailVerified: false };
  const stranger = { sub: randomUUID(), email: `stranger-${run}@elsewhere.example`, name: 'Stranger' };
  // Addresses of users provisioned ahead (one not yet signed in, one signed in elsewhere), in tokens of new subjects.
  const claimer = { sub: randomUUID(), email: `invited-${run}@elsewhere.example`, name: 'Claimer', emailVerified: false };
  const lookalike = { sub: randomUUID(), email: `taken-${run}@elsewhere.example`, name: 'Lookalike' };
  let stack: TestStack;
  let joinable: any;

  beforeAll(async () => {
    stack = await startTestStack({ devUsers: [...DEV_USERS, joiner, unverified, stranger, claimer, lookalike] });
    const created = await stack.request('POST', '/v4/platform/tenants', {
      as: PLATFORM_ADMIN,
      body: { name: 'Joinable', slug: `joinable-${run}`, domains: [domain.toUpperCase()], homeRegion: 'ca' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    joinable = created.body;
    const listed = await until(
      () => stack.request('GET', '/v4/identity/tenants', { as: PLATFORM_ADMIN }),
      (r) => r.body.data.some((t: any) => t.id === joinable.id && t.status !== 'provisioning'),
    );
    expect(listed.body.data.find((t: any) => t.id === joinable.id).status).toBe('active');
  });
  afterAll(() => stack?.close());

  it('shows the caller’s own record with their platform roles', async () => {
    const admin = await stack.request('GET', '/v4/identity/me', { as: ADMIN });
    expect(admin.status).toBe(200);
    expect(Object.keys(admin.body).sort()).toEqual(['avatar', 'createdAt', 'email', 'id', 'lastLoginAt', 'name', 'platformRoles', 'preferences', 'status']);
    expect(admin.body).toMatchObject({ email: ADMIN, name: 'Acme Admin', status: 'active', platformRoles: [] });
    const platform = await stack.request('GET', '/v4/identity/me', { as: PLATFORM_ADMIN });
    expect(platform.body.platformRoles).toEqual(['platform-admin']);
    const anonymous = await stack.request('GET', '/v4/identity/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
  });

  it('updates the caller’s profile without any tenant membership, and validates it', async () => {
    const updated = await stack.request('PATCH', '/v4/identity/me/profile', {
      as: stranger.email,
      body: { name: 'Renamed Stranger', preferences: { timezone: 'Europe/Berlin', notifications: { push: true } } },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({
      email: stranger.email,
      name: 'Renamed Stranger',
      preferences: { theme: 'system', timezone: 'Europe/Berlin', notifications: { email: true, push: true } },
    });
    expect((await stack.request('GET', '/v4/identity/me', { as: stranger.email })).body.name).toBe('Renamed Stranger');

    const unknown = await stack.request('PATCH', '/v4/identity/me/profile', { as: stranger.email, body: { email: 'x@y.example' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'email' } });
    const badZone = await stack.request('PATCH', '/v4/identity/me/profile', { as: stranger.email, body: { preferences: { timezone: 'Mars/Base' } } });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.details.field).toBe('preferences.timezone');
    const notObject = await stack.request('PATCH', '/v4/identity/me/profile', { as: stranger.email, body: ['x'] });
    expect(notObject.status).toBe(400);
    expect((await stack.request('GET', '/v4/identity/me', { as: stranger.email })).body.name).toBe('Renamed Stranger');
  });

  it('lists one entry per membership with the tenant and the caller’s roles', async () => {
    const admin = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    expect(admin.status).toBe(200);
    const acme = admin.body.data.find((t: any) => t.slug === 'acme');
    expect(acme).toMatchObject({ name: 'Acme Corporation', status: 'active', homeRegion: 'au', parentId: null, statusReason: null });
    expect(acme.roles).toContain('tenant-admin');
    expect(Object.keys(acme).sort()).toEqual(['homeRegion', 'id', 'name', 'parentId', 'roles', 'slug', 'status', 'statusReason']);

    const globex = await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN });
    expect(globex.body.data.find((t: any) => t.slug === 'globex').roles).toContain('tenant-admin');
    expect(globex.body.data.map((t: any) => t.slug)).not.toContain('acme');

    const member = await stack.request('GET', '/v4/identity/tenants', { as: MEMBER });
    expect(member.body.data.find((t: any) => t.slug === 'acme').roles).toEqual(['member']);
    expect((await stack.request('GET', '/v4/identity/tenants', { as: stranger.email })).body.data).toEqual([]);
  });

  it('self-provisions a user whose verified e-mail domain the tenant lists, as member', async () => {
    const before = await stack.request('GET', `${V3}/resources?type=project`, { as: joiner.email, headers: { 'x-tenant-id': joinable.id } });
    expect(before.status).toBe(403);

    const joined = await stack.request('POST', '/v4/identity/me/provision', { as: joiner.email, body: { tenant_id: joinable.id } });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    expect(joined.body).toMatchObject({ tenantId: joinable.id, roles: ['member'], status: 'active' });
    const me = await stack.request('GET', '/v4/identity/me', { as: joiner.email });
    expect(joined.body.userId).toBe(me.body.id);

    const again = await stack.request('POST', `/v4/identity/me/provision?tenant_id=${joinable.slug}`, { as: joiner.email });
    expect(again.status).toBe(200);
    expect(again.body.roles).toEqual(['member']);
    // The tenant named in both places, or under another name, is refused rather than one of them chosen.
    for (const [path, body, field] of [
      [`/v4/identity/me/provision?tenant_id=${joinable.slug}`, { tenant_id: joinable.id }, 'tenant_id'],
      [`/v4/identity/me/provision?tenant_id=${joinable.slug}`, { tenantId: joinable.id }, 'tenantId'],
    ] as const) {
      const refused = await stack.request('POST', path, { as: joiner.email, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }

    const tenants = await stack.request('GET', '/v4/identity/tenants', { as: joiner.email });
    expect(tenants.body.data).toEqual([expect.objectContaining({ id: joinable.id, slug: joinable.slug, status: 'active', roles: ['member'] })]);
    const usable = await stack.request('GET', `${V3}/resources?type=project`, { as: joiner.email, headers: { 'x-tenant-id': joinable.id } });
    expect(usable.status).toBe(200);
  });

  it('refuses self-provisioning with 403 for another domain, an unverified address or an unknown tenant', async () => {
    const refusals = [
      await stack.request('POST', '/v4/identity/me/provision', { as: stranger.email, body: { tenant_id: joinable.id } }),
      await stack.request('POST', `/v4/identity/me/provision?tenant_id=${joinable.id}`, { as: unverified.email }),
      await stack.request('POST', '/v4/identity/me/provision', { as: joiner.email, body: { tenant_id: randomUUID() } }),
      await stack.request('POST', '/v4/identity/me/provision', { as: joiner.email, body: { tenant_id: 'acme' } }),
      await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: 'acme' } }),
    ];
    for (const refusal of refusals) {
      expect(refusal.status, JSON.stringify(refusal.body)).toBe(403);
      expect(refusal.body.error.code).toBe('FORBIDDEN');
    }
    expect((await stack.request('GET', '/v4/identity/tenants', { as: stranger.email })).body.data).toEqual([]);
    expect((await stack.request('GET', '/v4/identity/tenants', { as: unverified.email })).body.data).toEqual([]);

    const missing = await stack.request('POST', '/v4/identity/me/provision', { as: joiner.email });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'tenant_id' } });
  });

  it('binds a user provisioned ahead only to a token whose e-mail address is verified, and refuses an address taken by another account', async () => {
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      const [invited] = await sql<[{ id: string }]>`insert into users (email, name) values (${claimer.email}, 'Invited') returning id::text as id`;
      await sql`insert into users (subject, email, name) values (${randomUUID()}, ${lookalike.email}, 'Signed in elsewhere')`;

      const messages = {
        [claimer.email]: `the email address ${claimer.email} is of a user provisioned ahead, whom only a token saying the address is verified (email_verified) signs in as`,
        [lookalike.email]: `another account uses the email address ${lookalike.email}`,
      };
      for (const [email, message] of Object.entries(messages)) {
        const refused = await stack.request('GET', '/v4/identity/me', { as: email });
        expect(refused.status, JSON.stringify(refused.body)).toBe(403);
        expect(refused.body.error).toEqual({ code: 'FORBIDDEN', message });
      }
      const [kept] = await sql<[{ subject: string | null; name: string }]>`select subject, name from users where id = ${invited.id}`;
      expect(kept).toEqual({ subject: null, name: 'Invited' });
      const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from users where subject in (${claimer.sub}, ${lookalike.sub})`;
      expect(count).toBe(0);
    } finally {
      await sql.end();
    }
  });

  it('serves health with a real database check, without authentication', async () => {
    const response = await stack.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });
});
