import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type ApiResponse, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';
import { createDb } from '../../control-plane/db/client.ts';
import { belongsElsewhere } from '../../control-plane/users/users.repo.ts';

/**
 * The v3 users contract over HTTP. The seeded users are shared with other test files that run at
 * the same time, so they are only read here; every change is made to users this file provisions
 * in the `acme` tenant under a random marker, which the list queries search for.
 */

type Row = Record<string, any>;

const M = randomBytes(4).toString('hex');
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const USER_KEYS = ['avatar', 'createdAt', 'email', 'id', 'lastLoginAt', 'name', 'permissions', 'preferences', 'role', 'status', 'tenantId'];
const LIST_ITEM_KEYS = ['email', 'id', 'lastLoginAt', 'name', 'role', 'status'];

interface Fixture extends DevUser {
  roles: string[];
  status: 'active' | 'inactive';
}

const fixture = (key: string, name: string, roles: string[], status: Fixture['status'] = 'active'): Fixture => ({
  sub: randomUUID(),
  email: `${M}-${key}@acme.test`,
  name,
  tenant: 'acme',
  roles,
  status,
});

/** Ordered by email, as `GET /users` orders them. */
const ALICE = fixture('alice', `Alice ${M}`, ['member']);
const BOB = fixture('bob', `Bob ${M}`, ['member'], 'inactive');
const CAROL = { ...fixture('carol', `Carol Quokka${M}`, ['member', 'admin']), picture: `https://images.example/${M}/carol.png` };
const MANAGER = fixture('manager', `Manager ${M}`, ['admin']);
const FIXTURES = [ALICE, BOB, CAROL, MANAGER];
/** A member of acme and of globex, under its own marker so that the list queries above never find it (a globex address: other files check that globex sees only those). */
const S = randomBytes(4).toString('hex');
const SHARED: DevUser = { sub: randomUUID(), email: `${S}-shared@globex.test`, name: `Shared ${S}`, tenant: 'acme' };

const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
let stack: TestStack;
const ids = new Map<string, string>();
const idOf = (user: { email: string }) => ids.get(user.email)!;

beforeAll(async () => {
  stack = await startTestStack({ devUsers: [...DEV_USERS, ...FIXTURES, SHARED] });
  const [acme] = await sql<{ id: string }[]>`select id::text as id from tenants where slug = 'acme'`;
  for (const user of FIXTURES) {
    const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles, status) values (${acme!.id}::uuid, ${row!.id}::uuid, ${user.roles}, ${user.status})`;
    ids.set(user.email, row!.id);
  }
  const [shared] = await sql<{ id: string }[]>`insert into users (email, name) values (${SHARED.email}, ${SHARED.name}) returning id::text as id`;
  await sql`insert into memberships (tenant_id, user_id, roles) select id, ${shared!.id}::uuid, '{member}' from tenants where slug in ('acme', 'globex')`;
  ids.set(SHARED.email, shared!.id);
  for (const email of [ADMIN, MEMBER, GLOBEX_ADMIN]) {
    const me = await stack.request('GET', `${V3}/users/me`, { as: email });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    ids.set(email, me.body.id);
  }
});

afterAll(async () => {
  await stack?.close();
  const userIds = [...ids.entries()].filter(([email]) => email.startsWith(`${M}-`) || email === SHARED.email).map(([, id]) => id);
  await sql`delete from memberships where user_id = any(${userIds}::uuid[])`;
  await sql`delete from users where id = any(${userIds}::uuid[])`;
  await sql.end();
});

const me = (as: string) => stack.request('GET', `${V3}/users/me`, { as });
const patch = (target: string, body: unknown, as: string) => stack.request('PATCH', `${V3}/users/${target}`, { as, body });
const list = (query: Record<string, string>, as = MANAGER.email) => stack.request('GET', `${V3}/users?${new URLSearchParams(query)}`, { as });
const emails = (res: ApiResponse) => res.body.data.map((u: Row) => u.email);

function expectValidationError(res: ApiResponse, field?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
  if (field) expect(res.body.error.details.field).toMatch(field);
}

function expectFullUser(user: Row): void {
  expect(Object.keys(user).sort()).toEqual(USER_KEYS);
  expect(user.id).toMatch(UUID);
  expect(user.tenantId).toMatch(UUID);
  expect(typeof user.email).toBe('string');
  expect(typeof user.name).toBe('string');
  expect(typeof user.role).toBe('string');
  expect(['active', 'inactive']).toContain(user.status);
  expect(Array.isArray(user.permissions)).toBe(true);
  expect(user.permissions.every((p: unknown) => typeof p === 'string')).toBe(true);
  expect(user.preferences).toEqual({
    theme: expect.any(String),
    language: expect.any(String),
    timezone: expect.any(String),
    notifications: { email: expect.any(Boolean), push: expect.any(Boolean) },
  });
  expect(user.createdAt).toMatch(ISO_TIMESTAMP);
  if (user.lastLoginAt !== null) expect(user.lastLoginAt).toMatch(ISO_TIMESTAMP);
}

describe('GET /users/me', () => {
  it('returns the full record of the caller', async () => {
    const admin = await me(ADMIN);
    expect(admin.status).toBe(200);
    expectFullUser(admin.body);
    expect(admin.body).toMatchObject({ email: ADMIN, name: 'Acme Admin', role: 'admin', status: 'active' });
    expect(admin.body.permissions).toEqual(expect.arrayContaining(['resources.read', 'resources.create', 'resources.update', 'users.manage', 'chat.access']));

    const member = await me(MEMBER);
    expect(member.status).toBe(200);
    expectFullUser(member.body);
    expect(member.body).toMatchObject({ email: MEMBER, role: 'member', status: 'active', tenantId: admin.body.tenantId });
    expect(member.body.permissions).toContain('resources.read');
    expect(member.body.permissions).not.toContain('users.manage');

    const globex = await me(GLOBEX_ADMIN);
    expect(globex.body.tenantId).not.toBe(admin.body.tenantId);
  });

  it('sets lastLoginAt when the user signs in', async () => {
    const before = await list({ search: `${M}-alice@` });
    expect(before.body.data).toEqual([expect.objectContaining({ email: ALICE.email, lastLoginAt: null })]);
    const signInStarted = Math.floor(Date.now() / 1000) * 1000;
    const { accessToken } = await loginWithPkce({ issuer: stack.url, email: ALICE.email });
    const res = await stack.request('GET', `${V3}/users/me`, { token: accessToken });
    expect(res.status).toBe(200);
    expectFullUser(res.body);
    expect(res.body).toMatchObject({ id: idOf(ALICE), email: ALICE.email, name: ALICE.name, role: 'member' });
    expect(res.body.lastLoginAt).toMatch(ISO_TIMESTAMP);
    expect(Date.parse(res.body.lastLoginAt)).toBeGreaterThanOrEqual(signInStarted);
    expect(Date.parse(res.body.lastLoginAt)).toBeLessThanOrEqual(Date.now());
  });

  it('takes avatar from the token\'s picture claim, and keeps null without one', async () => {
    const { accessToken } = await loginWithPkce({ issuer: stack.url, email: CAROL.email });
    const carol = await stack.request('GET', `${V3}/users/me`, { token: accessToken });
    expect(carol.status).toBe(200);
    expect(carol.body.avatar).toBe(CAROL.picture);
    expect((await me(ADMIN)).body.avatar).toBeNull();
  });

  it('shows a user who never signed in with lastLoginAt null', async () => {
    const res = await stack.request('GET', `${V3}/users/${idOf(BOB)}`, { as: MANAGER.email });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: BOB.email, status: 'inactive', lastLoginAt: null });
  });

  it('needs authentication', async () => {
    const res = await stack.request('GET', `${V3}/users/me`);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('GET /users/:id', () => {
  it('returns another member of the same tenant with the same structure as /users/me', async () => {
    const own = await me(ADMIN);
    const res = await stack.request('GET', `${V3}/users/${own.body.id}`, { as: MEMBER });
    expect(res.status).toBe(200);
    expectFullUser(res.body);
    expect({ ...res.body, lastLoginAt: null }).toEqual({ ...own.body, lastLoginAt: null });

    const manager = await stack.request('GET', `${V3}/users/${idOf(MANAGER)}`, { as: ALICE.email });
    expect(manager.status).toBe(200);
    expectFullUser(manager.body);
    expect(manager.body).toMatchObject({ id: idOf(MANAGER), email: MANAGER.email, name: MANAGER.name, role: 'admin' });
  });

  it.each([
    ['a user of another tenant', () => idOf({ email: GLOBEX_ADMIN })],
    ['an unknown id', () => randomUUID()],
    ['a non-UUID id', () => 'not-a-uuid'],
    ['a very long id', () => 'x'.repeat(300)],
  ])('gives 404 for %s', async (_label, id) => {
    const res = await stack.request('GET', `${V3}/users/${id()}`, { as: ADMIN });
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('GET /users', () => {
  it('needs users.manage: a member gets 403 FORBIDDEN', async () => {
    const res = await list({}, MEMBER);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect((await list({ search: M }, ALICE.email)).status).toBe(403);
  });

  it('lists the tenant’s users as {data: [{id, email, name, role, status, lastLoginAt}], total}, ordered by email', async () => {
    const res = await list({ limit: '100' }, ADMIN);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'total']);
    for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
    expect(emails(res)).toEqual(expect.arrayContaining([ADMIN, MEMBER, ...FIXTURES.map((u) => u.email)]));
    expect(emails(res)).not.toContain(GLOBEX_ADMIN);
    const lower = emails(res).map((e: string) => e.toLowerCase());
    expect(lower).toEqual([...lower].sort());
    expect(res.body.total).toBeGreaterThanOrEqual(res.body.data.length);

    const admin = res.body.data.find((u: Row) => u.email === ADMIN);
    expect(admin).toEqual({ id: idOf({ email: ADMIN }), email: ADMIN, name: 'Acme Admin', role: 'admin', status: 'active', lastLoginAt: expect.stringMatching(ISO_TIMESTAMP) });
  });

  it('searches name or email, case-insensitively', async () => {
    const all = await list({ search: M });
    expect(emails(all)).toEqual(FIXTURES.map((u) => u.email));
    expect(all.body.total).toBe(4);
    const byName = await list({ search: `quokka${M.toUpperCase()}` });
    expect(emails(byName)).toEqual([CAROL.email]);
    expect(byName.body.total).toBe(1);
    expect(emails(await list({ search: `${M}-ALICE@` }))).toEqual([ALICE.email]);
    expect(emails(await list({ search: `Manager ${M}` }))).toEqual([MANAGER.email]);
    expect(emails(await list({ search: 'member@ACME' }, ADMIN))).toEqual([MEMBER]);
    const none = await list({ search: `nobody-${M}` });
    expect(none.body).toEqual({ data: [], total: 0 });
  });

  it('filters by role (any of the user’s roles) and by status', async () => {
    expect(emails(await list({ search: M, role: 'admin' }))).toEqual([CAROL.email, MANAGER.email]);
    expect(emails(await list({ search: M, role: 'member' }))).toEqual([ALICE.email, BOB.email, CAROL.email]);
    expect(emails(await list({ search: M, role: 'nobody' }))).toEqual([]);
    const inactive = await list({ search: M, status: 'inactive' });
    expect(inactive.body).toEqual({ data: [{ id: idOf(BOB), email: BOB.email, name: BOB.name, role: 'member', status: 'inactive', lastLoginAt: null }], total: 1 });
    expect(emails(await list({ search: M, status: 'active' }))).toEqual([ALICE.email, CAROL.email, MANAGER.email]);
    expect(emails(await list({ search: M, status: 'active', role: 'member' }))).toEqual([ALICE.email, CAROL.email]);
    expectValidationError(await list({ status: 'deleted' }), /^status$/);
  });

  it('pages with limit and offset; total counts every match', async () => {
    const first = await list({ search: M, limit: '2' });
    expect(first.body).toMatchObject({ total: 4 });
    expect(emails(first)).toEqual([ALICE.email, BOB.email]);
    const second = await list({ search: M, limit: '2', offset: '2' });
    expect(emails(second)).toEqual([CAROL.email, MANAGER.email]);
    expect(second.body.total).toBe(4);
    const middle = await list({ search: M, limit: '1', offset: '1' });
    expect(emails(middle)).toEqual([BOB.email]);
    const beyond = await list({ search: M, offset: '10' });
    expect(beyond.body).toEqual({ data: [], total: 4 });
  });

  it.each(['0', '101', '-1', 'x'])('rejects limit=%s on "limit"', async (limit) => {
    expectValidationError(await list({ limit }), /^limit$/);
  });

  it('rejects a negative offset on "offset"', async () => {
    expectValidationError(await list({ offset: '-1' }), /^offset$/);
  });
});

describe('PATCH /users/me', () => {
  const reset = { theme: 'light', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } };

  it('changes the name and answers 200 with the full user record', async () => {
    const res = await patch('me', { name: `Alice Renamed ${M}` }, ALICE.email);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectFullUser(res.body);
    expect(res.body).toMatchObject({ id: idOf(ALICE), email: ALICE.email, name: `Alice Renamed ${M}`, role: 'member' });
    expect((await me(ALICE.email)).body).toEqual(res.body);
    expect((await patch('me', { name: ALICE.name }, ALICE.email)).body.name).toBe(ALICE.name);
  });

  it('merges preferences deeply: a partial object keeps every other preference', async () => {
    const set = await patch('me', { preferences: { ...reset, theme: 'dark', timezone: 'Europe/Berlin' } }, ALICE.email);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.preferences).toEqual({ theme: 'dark', language: 'en', timezone: 'Europe/Berlin', notifications: { email: true, push: false } });

    const push = await patch('me', { preferences: { notifications: { push: true } } }, ALICE.email);
    expect(push.status, JSON.stringify(push.body)).toBe(200);
    expectFullUser(push.body);
    expect(push.body.preferences).toEqual({ theme: 'dark', language: 'en', timezone: 'Europe/Berlin', notifications: { email: true, push: true } });
    expect(push.body.name).toBe(ALICE.name);

    const language = await patch('me', { preferences: { language: 'de' } }, ALICE.email);
    expect(language.body.preferences).toEqual({ theme: 'dark', language: 'de', timezone: 'Europe/Berlin', notifications: { email: true, push: true } });
    expect((await me(ALICE.email)).body.preferences).toEqual(language.body.preferences);

    const both = await patch('me', { name: `Alice Both ${M}`, preferences: { notifications: { email: false } } }, ALICE.email);
    expect(both.body).toMatchObject({ name: `Alice Both ${M}`, preferences: { theme: 'dark', language: 'de', timezone: 'Europe/Berlin', notifications: { email: false, push: true } } });
    await patch('me', { name: ALICE.name, preferences: reset }, ALICE.email);
  });

  it.each(['Mars/Olympus_Mons', 'Europe/Atlantis', 'GMT+25', 'not a zone', '../etc/passwd', ''])(
    'rejects the timezone "%s" on a field naming timezone, and changes nothing',
    async (timezone) => {
      await patch('me', { preferences: reset }, ALICE.email);
      const before = (await me(ALICE.email)).body;
      const res = await patch('me', { name: `Changed ${M}`, preferences: { timezone } }, ALICE.email);
      expectValidationError(res, /timezone/);
      const after = (await me(ALICE.email)).body;
      expect({ ...after, lastLoginAt: null }).toEqual({ ...before, lastLoginAt: null });
    },
  );

  it('accepts IANA time zone names', async () => {
    for (const timezone of ['America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Etc/GMT+5', 'UTC']) {
      const res = await patch('me', { preferences: { timezone } }, ALICE.email);
      expect(res.status, `${timezone}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.preferences.timezone).toBe(timezone);
    }
  });

  it.each([
    ['an unknown field', { nickname: 'Al' }],
    ['a role', { role: 'admin' }],
    ['an email', { email: `hijack-${M}@acme.test` }],
    ['an id (the path names the user)', { id: '00000000-0000-4000-8000-000000000000', name: `Not Me ${M}` }],
    ['permissions', { permissions: ['users.manage'] }],
    ['an unknown preference', { preferences: { fontSize: 14 } }],
    ['an unknown notification channel', { preferences: { notifications: { sms: true } } }],
    ['a non-boolean notification', { preferences: { notifications: { push: 'yes' } } }],
    ['a non-string theme', { preferences: { theme: 3 } }],
    ['an empty name', { name: '' }],
    ['a non-string name', { name: 42 }],
  ])('rejects %s with 400 and changes nothing', async (_label, body) => {
    const before = (await me(ALICE.email)).body;
    expectValidationError(await patch('me', body, ALICE.email));
    const after = (await me(ALICE.email)).body;
    expect({ ...after, lastLoginAt: null }).toEqual({ ...before, lastLoginAt: null });
    expect(after.role).toBe('member');
    expect(after.permissions).not.toContain('users.manage');
  });

  it('rejects a body that is not a JSON object', async () => {
    expectValidationError(await patch('me', ['name'], ALICE.email));
    expectValidationError(await stack.request('PATCH', `${V3}/users/me`, { as: ALICE.email, rawBody: '{"name":' }), /^\(body\)$/);
  });
});

describe('PATCH /users/:id', () => {
  it('lets a user change themself by id', async () => {
    const res = await patch(idOf(ALICE), { name: `Alice By Id ${M}` }, ALICE.email);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: idOf(ALICE), name: `Alice By Id ${M}` });
    await patch('me', { name: ALICE.name }, ALICE.email);
  });

  it('refuses a member changing someone else: 403 FORBIDDEN, nothing changes', async () => {
    const before = (await stack.request('GET', `${V3}/users/${idOf(MANAGER)}`, { as: MANAGER.email })).body;
    const res = await patch(idOf(MANAGER), { name: 'Taken over', preferences: { theme: 'evil' } }, ALICE.email);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    const bySeededMember = await patch(idOf(ALICE), { name: 'Taken over' }, MEMBER);
    expect(bySeededMember.status).toBe(403);
    expect(bySeededMember.body.error.code).toBe('FORBIDDEN');
    const after = (await stack.request('GET', `${V3}/users/${idOf(MANAGER)}`, { as: MANAGER.email })).body;
    expect({ ...after, lastLoginAt: null }).toEqual({ ...before, lastLoginAt: null });
    expect((await me(ALICE.email)).body.name).toBe(ALICE.name);
  });

  it('lets a holder of users.manage change another user: 200 with the full record', async () => {
    const res = await patch(idOf(ALICE), { name: `Alice Managed ${M}`, preferences: { theme: 'high-contrast' } }, MANAGER.email);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectFullUser(res.body);
    expect(res.body).toMatchObject({ id: idOf(ALICE), email: ALICE.email, name: `Alice Managed ${M}`, role: 'member', preferences: { theme: 'high-contrast' } });
    expect((await me(ALICE.email)).body).toMatchObject({ name: `Alice Managed ${M}`, preferences: { theme: 'high-contrast', notifications: expect.any(Object) } });

    const bySeededAdmin = await patch(idOf(CAROL), { name: `Carol Managed ${M}` }, ADMIN);
    expect(bySeededAdmin.status).toBe(200);
    expect(bySeededAdmin.body).toMatchObject({ id: idOf(CAROL), name: `Carol Managed ${M}` });

    await patch(idOf(ALICE), { name: ALICE.name }, MANAGER.email);
    await patch(idOf(CAROL), { name: CAROL.name }, MANAGER.email);
  });

  it('refuses every tenant’s users.manage holder changing a user who belongs to other tenants too: 403, nothing changes', async () => {
    const before = (await me(SHARED.email)).body;
    for (const admin of [MANAGER.email, GLOBEX_ADMIN]) {
      const res = await patch(idOf(SHARED), { name: 'Renamed elsewhere', preferences: { theme: 'evil' } }, admin);
      expect(res.status, `${admin}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    expect((await me(SHARED.email)).body).toEqual(before);
    const own = await patch('me', { name: `Shared Renamed ${S}` }, SHARED.email);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.name).toBe(`Shared Renamed ${S}`);
  });

  it('makes an administrator\u2019s change wait for a membership being added in another tenant, then refuses it: 403, nothing changes', async () => {
    const [joining] = await sql<{ id: string }[]>`insert into users (email, name) values (${`${S}-joining@globex.test`}, 'Joining') returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) select id, ${joining!.id}::uuid, '{member}' from tenants where slug = 'acme'`;
    const holder = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    let commit = () => {};
    try {
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let added!: (pid: number) => void;
      const addedBy = new Promise<number>((resolve) => (added = resolve));
      // Globex adds the user, and has not committed yet.
      const joined = holder.begin(async (tx) => {
        await tx`insert into memberships (tenant_id, user_id, roles) select id, ${joining!.id}::uuid, '{member}' from tenants where slug = 'globex'`;
        added((await tx<[{ pid: number }]>`select pg_backend_pid() as pid`)[0].pid);
        await committing;
      });
      joined.catch(() => {});
      const pid = await addedBy;
      const change = patch(joining!.id, { name: 'Renamed meanwhile' }, MANAGER.email);
      const waited = await Promise.race([
        change.then(() => false),
        until(() => sql`select 1 from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`, (rows) => rows.length > 0, 15_000).then(() => true),
      ]);
      commit();
      await joined;
      const res = await change;
      expect(waited).toBe(true);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
      expect(await sql`select name from users where id = ${joining!.id}::uuid`).toEqual([{ name: 'Joining' }]);
    } finally {
      commit();
      await holder.end({ timeout: 5 });
    }
  });

  it('tells a tenant transaction whether one of its members belongs elsewhere, and nothing about anyone else', async () => {
    const db = createDb(inject('databaseUrl'), { max: 1, tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    try {
      const [acme, globex] = await sql<{ id: string }[]>`select id::text as id from tenants where slug in ('acme', 'globex') order by slug`;
      const acmeOnly = idOf(ALICE);
      expect(await db.inTenant(acme!.id, (tx) => belongsElsewhere(tx, idOf(SHARED)))).toBe(true);
      expect(await db.inTenant(acme!.id, (tx) => belongsElsewhere(tx, acmeOnly))).toBe(false);
      // Globex's transaction learns nothing of a user who is not its member, though that user belongs to acme.
      expect(await db.inTenant(globex!.id, (tx) => belongsElsewhere(tx, acmeOnly))).toBe(false);
    } finally {
      await db.close();
    }
  });

  it('gives 404 for a user of another tenant, an unknown id and a non-UUID id', async () => {
    for (const id of [idOf({ email: GLOBEX_ADMIN }), randomUUID(), 'not-a-uuid']) {
      const res = await patch(id, { name: 'Renamed' }, MANAGER.email);
      expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await me(GLOBEX_ADMIN)).body.name).toBe('Globex Admin');
  });
});
