import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';

/**
 * v4 configuration store: an app's entries per environment, secrets sealed at rest with the
 * operator's key and shown only to administrators who ask, every change audited without its
 * value, writes all or none, and no tenant reaching another's.
 */
describe('v4 configuration store', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenant: TenantFixture;
  const secretValue = `s3cr3t-${randomBytes(8).toString('hex')}`;

  const set = (label = 'shop', environment = 'dev') => `/v4/platform/config/${tenant.id}/${label}/${environment}`;
  const admin = () => tenant.admin.email;
  const member = () => tenant.member.email;
  const entries = async (as: string, path = set(), query = '') => {
    const got = await stack.request('GET', `${path}${query}`, { as });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    return got.body;
  };

  beforeAll(async () => {
    tenant = await createTenantFixture(sql, 'config');
    stack = await startTestStack({ devUsers: [...DEV_USERS, tenant.admin, tenant.member] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it('sets keys one at a time: 201 when new, 200 when changed or the same, never echoing a secret', async () => {
    const created = await stack.request('PUT', `${set()}/API_URL`, { as: admin(), body: { value: 'https://api.example.test' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({ key: 'API_URL', value: 'https://api.example.test', secret: false, version: 1, updated_by: expect.any(String) });
    const same = await stack.request('PUT', `${set()}/API_URL`, { as: admin(), body: { value: 'https://api.example.test' } });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(1);
    const changed = await stack.request('PUT', `${set()}/API_URL`, { as: admin(), body: { value: 'https://api2.example.test' } });
    expect(changed.body).toMatchObject({ value: 'https://api2.example.test', version: 2 });

    const secret = await stack.request('PUT', `${set()}/CLIENT_SECRET`, { as: admin(), body: { value: secretValue, secret: true } });
    expect(secret.status).toBe(201);
    expect(secret.body).toMatchObject({ key: 'CLIENT_SECRET', value: null, secret: true, version: 1 });
    expect(JSON.stringify(secret.body)).not.toContain(secretValue);
  });

  it('seals secrets at rest with the operator key: the database holds neither the value nor the key', async () => {
    const [row] = await sql<{ value: string | null; sealed: string }[]>`
      select value, sealed_value as sealed from config_entries where tenant_id = ${tenant.id}::uuid and key = 'CLIENT_SECRET'`;
    expect(row!.value).toBeNull();
    expect(row!.sealed).toMatch(/^sealed:v1:[0-9a-f]{12}:/);
    expect(row!.sealed).not.toContain(secretValue);
    expect(row!.sealed).not.toContain(Buffer.from(secretValue).toString('base64url'));
  });

  it('shows members the entries without secrets’ values, and secrets to administrators who ask, audited', async () => {
    const seen = await entries(member());
    expect(seen).toEqual({
      tenant_id: tenant.id,
      label: 'shop',
      environment: 'dev',
      secrets_included: false,
      data: [
        expect.objectContaining({ key: 'API_URL', value: 'https://api2.example.test', secret: false }),
        expect.objectContaining({ key: 'CLIENT_SECRET', value: null, secret: true }),
      ],
    });
    const refused = await stack.request('GET', `${set()}?include_secrets=true`, { as: member() });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe("reading secrets' values needs permission tenants.manage");
    expect((await entries(admin())).data[1].value).toBeNull();

    const revealed = await entries(admin(), set(), '?include_secrets=true');
    expect(revealed.secrets_included).toBe(true);
    expect(revealed.data.find((e: any) => e.key === 'CLIENT_SECRET').value).toBe(secretValue);
    const audit = await stack.request('GET', `/v4/platform/config/${tenant.id}/audit?action=x`, { as: admin() });
    expect(audit.status).toBe(400);
    const reads = await entries(admin(), `/v4/platform/config/${tenant.id}/audit`, '?label=shop&limit=1');
    expect(reads).toMatchObject({ limit: 1, offset: 0, data: [{ label: 'shop', environment: 'dev', key: null, action: 'secrets_read', secret: true, actor_email: admin() }] });
    expect(reads.total).toBe(4);
  });

  it('audits every change (who, when, which key), never a value', async () => {
    const page = await entries(admin(), `/v4/platform/config/${tenant.id}/audit`);
    expect(page.data.map((e: any) => [e.key, e.action, e.secret])).toEqual([
      [null, 'secrets_read', true],
      ['CLIENT_SECRET', 'created', true],
      ['API_URL', 'updated', false],
      ['API_URL', 'created', false],
    ]);
    for (const event of page.data) expect(event).toMatchObject({ actor_id: expect.any(String), actor_email: admin(), at: expect.stringMatching(/Z$/) });
    const stored = await sql`select * from config_audit where tenant_id = ${tenant.id}::uuid`;
    expect(JSON.stringify(stored)).not.toContain(secretValue);
    expect(JSON.stringify(stored)).not.toContain('api2.example.test');
    expect(stored).toHaveLength(4);
    const byKey = await entries(admin(), `/v4/platform/config/${tenant.id}/audit`, '?key=API_URL');
    expect(byKey.total).toBe(2);
    expect((await stack.request('GET', `/v4/platform/config/${tenant.id}/audit`, { as: member() })).status).toBe(403);
  });

  it('sets and removes several keys at once, all or none; a key set to what it holds is unchanged', async () => {
    const written = await stack.request('PATCH', set('shop', 'prod'), {
      as: admin(),
      body: { entries: [{ key: 'API_URL', value: 'https://prod.example.test' }, { key: 'DB_PASSWORD', value: 'pw-1', secret: true }, { key: 'FEATURE_X', value: 'on' }] },
    });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(written.body).toEqual({
      tenant_id: tenant.id,
      label: 'shop',
      environment: 'prod',
      changes: [
        { key: 'API_URL', action: 'created', secret: false, version: 1 },
        { key: 'DB_PASSWORD', action: 'created', secret: true, version: 1 },
        { key: 'FEATURE_X', action: 'created', secret: false, version: 1 },
      ],
    });
    const missing = await stack.request('PATCH', set('shop', 'prod'), { as: admin(), body: { entries: [{ key: 'FEATURE_X', value: 'off' }], remove: ['NOT_THERE'] } });
    expect(missing.status).toBe(404);
    expect((await entries(admin(), set('shop', 'prod'))).data.find((e: any) => e.key === 'FEATURE_X').value).toBe('on');

    // `secret` omitted keeps the stored flag; a secret made plain is an update.
    const again = await stack.request('PATCH', set('shop', 'prod'), {
      as: admin(),
      body: { entries: [{ key: 'API_URL', value: 'https://prod.example.test' }, { key: 'DB_PASSWORD', value: 'pw-1' }, { key: 'FEATURE_X', value: 'on', secret: true }], remove: [] },
    });
    expect(again.body.changes).toEqual([
      { key: 'API_URL', action: 'unchanged', secret: false, version: 1 },
      { key: 'DB_PASSWORD', action: 'unchanged', secret: true, version: 1 },
      { key: 'FEATURE_X', action: 'updated', secret: true, version: 2 },
    ]);
    const removed = await stack.request('PATCH', set('shop', 'prod'), { as: admin(), body: { remove: ['FEATURE_X'] } });
    expect(removed.body.changes).toEqual([{ key: 'FEATURE_X', action: 'deleted', secret: true, version: null }]);
    const deleted = await stack.request('DELETE', `${set('shop', 'prod')}/API_URL`, { as: admin() });
    expect(deleted.status).toBe(204);
    expect((await stack.request('DELETE', `${set('shop', 'prod')}/API_URL`, { as: admin() })).status).toBe(404);

    const sets = await entries(member(), `/v4/platform/config/${tenant.id}`);
    expect(sets.data).toEqual([
      { label: 'shop', environment: 'dev', entries: 2, secrets: 1, updated_at: expect.any(String) },
      { label: 'shop', environment: 'prod', entries: 1, secrets: 1, updated_at: expect.any(String) },
    ]);
  });

  it('refuses members’ writes and malformed input with a clear error, changing nothing', async () => {
    for (const [method, path, body] of [
      ['PUT', `${set()}/API_URL`, { value: 'taken over' }],
      ['PATCH', set(), { entries: [{ key: 'API_URL', value: 'taken over' }] }],
      ['DELETE', `${set()}/API_URL`, undefined],
    ] as const) {
      const refused = await stack.request(method, path, { as: member(), body });
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
    const bad: Array<[string, string, unknown, string]> = [
      ['PUT', `/v4/platform/config/${tenant.id}/My App/dev/API_URL`, { value: 'x' }, 'label'],
      ['PUT', `${set()}/1BAD`, { value: 'x' }, 'key'],
      ['PUT', `${set()}/API_URL`, { value: 'x'.repeat(32_769) }, 'value'],
      ['PUT', `${set()}/API_URL`, { value: 1 }, 'value'],
      ['PUT', `${set()}/API_URL`, { value: 'x', label: 'other' }, 'label'],
      ['PATCH', set(), { entries: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, 'entries.1.key'],
      ['PATCH', set(), {}, 'entries'],
      ['PATCH', set(), { entries: [], remove: [], extra: true }, 'extra'],
    ];
    for (const [method, path, body, field] of bad) {
      const refused = await stack.request(method, path, { as: admin(), body });
      expect(refused.status, `${method} ${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_ERROR');
      expect(refused.body.error.details.field).toBe(field);
    }
    expect((await entries(admin())).data.find((e: any) => e.key === 'API_URL')).toMatchObject({ value: 'https://api2.example.test', version: 2 });
  });

  it('keeps every tenant to its own configuration, by route and in PostgreSQL itself', async () => {
    for (const [method, path, body] of [
      ['GET', `${set()}?include_secrets=true`, undefined],
      ['GET', `/v4/platform/config/${tenant.id}`, undefined],
      ['GET', `/v4/platform/config/${tenant.id}/audit`, undefined],
      ['PUT', `${set()}/API_URL`, { value: 'taken over' }],
      ['DELETE', `${set()}/CLIENT_SECRET`, undefined],
    ] as const) {
      const refused = await stack.request(method, path, { as: GLOBEX_ADMIN, body });
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
    // Globex's own set of the same name is its own.
    const own = await stack.request('GET', '/v4/platform/config/globex/shop/dev?include_secrets=true', { as: GLOBEX_ADMIN });
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual([]);

    const asGlobex = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) =>
      sql.begin(async (tx) => {
        const [globex] = await tx<{ id: string }[]>`select id::text from tenants where slug = 'globex'`;
        await tx`select set_config('svc.tenant_id', ${globex!.id}, true), set_config('role', 'svc_app', true)`;
        return fn(tx);
      });
    expect(await asGlobex((tx) => tx`select key from config_entries where tenant_id = ${tenant.id}::uuid`)).toHaveLength(0);
    expect(await asGlobex((tx) => tx`select id from config_audit where tenant_id = ${tenant.id}::uuid`)).toHaveLength(0);
    await expect(
      asGlobex((tx) => tx`insert into config_entries (tenant_id, label, environment, key, secret, value) values (${tenant.id}::uuid, 'shop', 'dev', 'PLANTED', false, 'x')`),
    ).rejects.toThrow(/row-level security/);
    // The audit is append-only for tenant connections.
    await expect(
      sql.begin(async (tx) => {
        await tx`select set_config('svc.tenant_id', ${tenant.id}, true), set_config('role', 'svc_app', true)`;
        await tx`delete from config_audit`;
      }),
    ).rejects.toThrow(/permission denied/);
  });
});
