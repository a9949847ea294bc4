import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/** v4 capabilities: the catalog, a tenant's decisions from its plan and overrides, and a feature that consults them. */
describe('v4 capabilities', () => {
  const suffix = randomBytes(4).toString('hex');
  const slug = `caps-${suffix}`;
  const admin = { sub: randomUUID(), email: `caps-admin-${suffix}@caps.test`, name: 'Caps Admin', tenant: slug };
  const member = { sub: randomUUID(), email: `caps-member-${suffix}@caps.test`, name: 'Caps Member', tenant: slug };
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenantId: string;

  beforeAll(async () => {
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    tenantId = tenant!.id;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenantId}::uuid, ${name}, ${permissions as string[]})`;
    }
    for (const [user, roles] of [[admin, ['admin', 'tenant-admin']], [member, ['member']]] as const) {
      const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
      await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${row!.id}::uuid, ${roles})`;
    }
    stack = await startTestStack({ devUsers: [...DEV_USERS, admin, member] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const evaluate = (body: unknown, as = member.email) => stack.request('POST', '/v4/platform/capabilities/evaluate', { as, body });

  it('lists every capability with what each plan includes, to any signed-in user', async () => {
    const catalog = await stack.request('GET', '/v4/platform/capabilities/catalog', { as: member.email });
    expect(catalog.status).toBe(200);
    expect(catalog.body.plans).toEqual(['free', 'team', 'enterprise']);
    const keys = catalog.body.data.map((c: any) => c.key);
    expect(keys).toEqual(expect.arrayContaining(['ai.chat', 'documents.ocr', 'search.vector', 'workflows.runtime', 'storage.blob', 'realtime', 'webhooks', 'geo']));
    expect(catalog.body.data.find((c: any) => c.key === 'ai.chat')).toMatchObject({ plans: { free: { included: false }, team: { included: true, limits: { maxMessagesPerDay: 2000 } } } });
    expect((await stack.request('GET', '/v4/platform/capabilities/catalog')).status).toBe(401);
  });

  it("decides from the tenant's plan, by default the platform's, which includes everything the API describes", async () => {
    const decided = await evaluate({ tenant_id: tenantId, capabilities: ['workflows.runtime', 'ai.chat'] });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body).toEqual({
      tenantId,
      plan: 'enterprise',
      decisions: {
        'workflows.runtime': { allowed: true, reason: 'included in the enterprise plan', limits: { maxConcurrentExecutions: 500 } },
        'ai.chat': { allowed: true, reason: 'included in the enterprise plan', limits: { maxMessagesPerDay: 50_000 } },
      },
    });
    const all = await evaluate({}, member.email);
    expect(Object.keys(all.body.decisions)).toContain('geo');
    expect(Object.values(all.body.decisions).every((decision: any) => decision.allowed)).toBe(true);
    const inRegion = await evaluate({ capabilities: ['geo'], context: { region: 'us' } });
    expect(inRegion.body.decisions.geo.allowed).toBe(false);

    const free = await stack.request('PUT', `/v4/platform/tenants/${tenantId}/plan`, { as: PLATFORM_ADMIN, body: { plan: 'free' } });
    expect(free.status, JSON.stringify(free.body)).toBe(200);
    expect((await evaluate({ capabilities: ['workflows.runtime', 'ai.chat'] })).body).toEqual({
      tenantId,
      plan: 'free',
      decisions: {
        'workflows.runtime': { allowed: true, reason: 'included in the free plan', limits: { maxConcurrentExecutions: 5 } },
        'ai.chat': { allowed: false, reason: 'the free plan does not include ai.chat', limits: {} },
      },
    });

    const team = await stack.request('PUT', `/v4/platform/tenants/${tenantId}/plan`, { as: PLATFORM_ADMIN, body: { plan: 'team' } });
    expect(team.status, JSON.stringify(team.body)).toBe(200);
    expect(team.body).toEqual({ tenantId, plan: 'team', fromTemplate: false });
    expect((await evaluate({ capabilities: ['ai.chat'] })).body.decisions['ai.chat']).toEqual({ allowed: true, reason: 'included in the team plan', limits: { maxMessagesPerDay: 2000 } });
  });

  it('lets a platform administrator allow or refuse one capability for one tenant, and take it back', async () => {
    const set = await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/geo`, {
      as: PLATFORM_ADMIN,
      body: { allowed: true, limits: { maxDatasets: 3 }, reason: 'pilot' },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ tenantId, capability: 'geo', allowed: true, limits: { maxDatasets: 3 }, reason: 'pilot' });
    expect((await evaluate({ capabilities: ['geo'] })).body.decisions.geo).toEqual({
      allowed: true,
      reason: 'allowed for this tenant by a platform administrator: pilot',
      limits: { maxDatasets: 3 },
    });
    expect((await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/geo`, { as: PLATFORM_ADMIN })).status).toBe(204);
    expect((await evaluate({ capabilities: ['geo'] })).body.decisions.geo.allowed).toBe(false);
    expect((await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/geo`, { as: PLATFORM_ADMIN })).status).toBe(404);
  });

  it('refuses a feature the tenant may not use with 403 naming the capability, and nothing starts', async () => {
    const refuse = await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/workflows.runtime`, {
      as: PLATFORM_ADMIN,
      body: { allowed: false, reason: 'suspended for review' },
    });
    expect(refuse.status).toBe(200);
    const refused = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: admin.email, body: { input: {}, async: true } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(
      'capability workflows.runtime is not available to this tenant: refused for this tenant by a platform administrator: suspended for review',
    );
    const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from executions where tenant_id = ${tenantId}::uuid`;
    expect(count).toBe(0);
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/workflows.runtime`, { as: PLATFORM_ADMIN });
    // Allowed again, the request goes on to the workflow, which this new tenant has none of.
    const allowed = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: admin.email, body: { input: {}, async: true } });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(404);
    expect(allowed.body.error.message).toBe('workflow "project-briefing" not found');
  });

  it('refuses file uploads to a tenant without data.files, naming it, and stores nothing', async () => {
    const created = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${tenantId}`, {
      as: admin.email,
      body: { name: `Memo${suffix}`, schema: { type: 'object' }, fileProperties: { text: { maxSize: 1000, contentTypes: ['text/plain'] } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const memo = (await stack.request('POST', `/v4/data/resources/${tenantId}/${created.body.key}`, { as: admin.email, body: { data: {} } })).body;
    await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/data.files`, { as: PLATFORM_ADMIN, body: { allowed: false, reason: 'no files' } });
    const upload = await fetch(`${stack.url}/v4/data/resources/${tenantId}/${created.body.key}/${memo.id}/files/text?filename=a.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await stack.token(admin.email)}` },
      body: 'hello',
    });
    expect(upload.status).toBe(403);
    expect(((await upload.json()) as any).error.message).toContain('capability data.files');
    expect((await stack.request('GET', `/v4/data/resources/${tenantId}/${created.body.key}/${memo.id}`, { as: admin.email })).body.version).toBe(1);
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/data.files`, { as: PLATFORM_ADMIN });
  });

  it.each<[string, string, string, unknown, string, number]>([
    ['an unknown capability to evaluate', 'POST', '/v4/platform/capabilities/evaluate', { capabilities: ['teleport'] }, 'member', 400],
    ['another tenant to evaluate', 'POST', '/v4/platform/capabilities/evaluate', { tenant_id: 'acme' }, 'member', 403],
    ['an override by a tenant administrator', 'PUT', '/v4/platform/capabilities/overrides/TENANT/geo', { allowed: true, reason: 'mine' }, 'admin', 403],
    ['an override without a reason', 'PUT', '/v4/platform/capabilities/overrides/TENANT/geo', { allowed: true }, 'platform', 400],
    ['an override of an unknown capability', 'PUT', '/v4/platform/capabilities/overrides/TENANT/teleport', { allowed: true, reason: 'x' }, 'platform', 400],
    ['a plan that does not exist', 'PUT', '/v4/platform/tenants/TENANT/plan', { plan: 'platinum' }, 'platform', 400],
    ['a plan for another tenant by its administrator', 'PUT', '/v4/platform/tenants/TENANT/plan', { plan: 'enterprise' }, 'globex', 403],
  ])('refuses %s', async (_label, method, path, body, who, status) => {
    const as = { member: member.email, admin: admin.email, platform: PLATFORM_ADMIN, globex: GLOBEX_ADMIN }[who]!;
    const response = await stack.request(method, path.replace('TENANT', tenantId), { as, body });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.error.code).toMatch(/^[A-Z_]+$/);
  });
});
