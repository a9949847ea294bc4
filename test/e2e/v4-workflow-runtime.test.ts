import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantWithUsers } from '../harness/tenant-fixture.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * v4 workflow runtime: each of the six statuses reached from the tenant's configuration resources,
 * its capabilities and its chat limits; binding requests for an operator; builder readiness.
 */
describe('v4 workflow runtime', () => {
  const slug = `runtime-${randomBytes(4).toString('hex')}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenantId: string;
  let admin: string;
  let member: string;

  beforeAll(async () => {
    // The free plan, which does not include ai.chat, until a test sets another.
    const fixture = await createTenantWithUsers(sql, { slug, plan: 'free', users: { admin: ['admin', 'tenant-admin'], member: ['member'] } });
    tenantId = fixture.tenantId;
    admin = fixture.users.admin!.email;
    member = fixture.users.member!.email;
    stack = await startTestStack({ devUsers: [...DEV_USERS, ...Object.values(fixture.users)] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const status = async (key: string, as = member) => {
    const response = await stack.request('GET', `/v4/workflows/runtime/${key}/status?tenant_id=${tenantId}`, { as });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  const create = async (type: string, data: object) => {
    const response = await stack.request('POST', `/v4/data/resources/${tenantId}/${type}`, { as: admin, body: { data } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body;
  };
  const setPlan = (plan: string) => stack.request('PUT', `/v4/platform/tenants/${tenantId}/plan`, { as: PLATFORM_ADMIN, body: { plan } });

  it('is unsupported for a key no workflow configuration has', async () => {
    expect(await status('no-such-workflow')).toEqual({
      tenantId,
      workflowKey: 'no-such-workflow',
      status: 'unsupported',
      reason: 'no workflow configuration (shared-workflow-config) of this tenant has the key "no-such-workflow"',
      displayName: null,
      provider: null,
      model: null,
      stages: [],
    });
  });

  it('is blocked while the workflow is a draft', async () => {
    await create('shared-workflow-config', { workflowKey: 'intake-draft', status: 'draft', displayName: 'Intake (draft)' });
    expect(await status('intake-draft')).toMatchObject({ status: 'blocked', reason: 'workflow "intake-draft" is a draft; set its status to active', displayName: 'Intake (draft)', stages: ['chat'] });
  });

  it('needs a paid upgrade while the plan does not include ai.chat', async () => {
    await create('shared-workflow-config', {
      workflowKey: 'support',
      status: 'active',
      displayName: 'Support',
      stages: [{ id: 'triage', prompt: 'Triage the request of {{customer}}.' }, { id: 'chat' }],
    });
    expect(await status('support')).toMatchObject({
      status: 'paid_upgrade_required',
      reason: 'capability ai.chat is not available to this tenant: the free plan does not include ai.chat',
      stages: ['triage', 'chat'],
    });
  });

  it('needs an operator until an AI runtime is bound, and one the platform can run', async () => {
    expect((await setPlan('team')).status).toBe(200);
    expect(await status('support')).toMatchObject({
      status: 'operator_required',
      reason: 'no AI runtime is bound to workflow "support": it has no active shared-chatbot-config',
    });
    await create('shared-chatbot-config', { workflowKey: 'support', status: 'active', aiProfileKey: 'hosted' });
    expect(await status('support')).toMatchObject({ status: 'operator_required', reason: 'AI profile "hosted" (shared-ai-profile) does not exist' });
    await create('shared-ai-profile', { profileKey: 'hosted', provider: 'openai', model: 'gpt-4o-mini' });
    // This stack has no OpenAI-compatible endpoint configured.
    expect(await status('support')).toMatchObject({
      status: 'operator_required',
      reason: 'provider "openai" needs the platform\'s OpenAI-compatible endpoint (AI_BASE_URL, AI_API_KEY, AI_MODEL), which is not configured',
      provider: 'openai',
      model: 'gpt-4o-mini',
    });
  });

  it('is available once bound to a runtime the platform runs', async () => {
    await create('shared-workflow-config', { workflowKey: 'faq', status: 'active', displayName: 'FAQ', aiProfileKey: 'local-profile' });
    await create('shared-ai-profile', { profileKey: 'local-profile', provider: 'local' });
    await create('shared-chatbot-config', { workflowKey: 'faq', status: 'active' });
    expect(await status('faq')).toEqual({
      tenantId,
      workflowKey: 'faq',
      status: 'available',
      reason: 'answers through the local provider',
      displayName: 'FAQ',
      provider: 'local',
      model: null,
      stages: ['chat'],
    });
  });

  it('is rate limited once the tenant’s chat messages of the day are spent', async () => {
    const override = await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/ai.chat`, {
      as: PLATFORM_ADMIN,
      body: { allowed: true, limits: { maxMessagesPerDay: 1 }, reason: 'trial' },
    });
    expect(override.status).toBe(200);
    const asked = await stack.request('POST', `/v4/ai/chat/${tenantId}/faq/chat`, { as: member, body: { message: 'Hello?' } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(await status('faq')).toMatchObject({ status: 'rate_limited', reason: "the tenant's 1 chat messages of today are spent" });
    const refused = await stack.request('POST', `/v4/ai/chat/${tenantId}/faq/chat`, { as: member, body: { message: 'Hello again?' } });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.body.error.retryAfter).toBeGreaterThan(0);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.retryAfter));
  });

  it('is blocked when a platform administrator refuses ai.chat although the plan includes it', async () => {
    const refuse = await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/ai.chat`, {
      as: PLATFORM_ADMIN,
      body: { allowed: false, reason: 'under review' },
    });
    expect(refuse.status).toBe(200);
    expect(await status('faq')).toMatchObject({
      status: 'blocked',
      reason: 'capability ai.chat is not available to this tenant: refused for this tenant by a platform administrator: under review',
    });
    expect((await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/ai.chat`, { as: PLATFORM_ADMIN })).status).toBe(204);
    expect((await status('faq')).status).toBe('available');
  });

  it('records a request for an operator once per workflow, answering the open one again', async () => {
    const first = await stack.request('POST', '/v4/workflows/runtime-requests', {
      as: admin,
      body: { tenant_id: tenantId, workflow_key: 'support', display_name: 'Support desk', reason: 'needs the hosted model' },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ tenantId, workflowKey: 'support', displayName: 'Support desk', reason: 'needs the hosted model', state: 'pending' });
    expect(first.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await stack.request('POST', `/v4/workflows/runtime-requests?tenant_id=${tenantId}`, { as: member, body: { workflow_key: 'support', reason: 'still waiting' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // Without a display name: the workflow's own, else its key.
    const other = await stack.request('POST', '/v4/workflows/runtime-requests', { as: admin, body: { tenant_id: tenantId, workflow_key: 'faq' } });
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ displayName: 'FAQ', reason: '', state: 'pending' });
    const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from workflow_runtime_requests where tenant_id = ${tenantId}::uuid`;
    expect(count).toBe(2);
  });

  it('reports tenant, plan and per-workflow readiness', async () => {
    const some = await stack.request('GET', `/v4/integrations/builder/readiness?tenant_id=${tenantId}&workflow_keys=faq,support,gone`, { as: member });
    expect(some.status, JSON.stringify(some.body)).toBe(200);
    expect(some.body.tenant).toEqual({ id: tenantId, slug, name: slug, status: 'active', homeRegion: 'eu' });
    expect(some.body.plan).toBe('team');
    expect(some.body.capabilities['ai.chat']).toMatchObject({ allowed: true });
    expect(some.body.workflows.map((w: any) => [w.workflowKey, w.status])).toEqual([
      ['faq', 'available'],
      ['support', 'operator_required'],
      ['gone', 'unsupported'],
    ]);
    expect(some.body.ready).toBe(false);
    const ready = await stack.request('GET', `/v4/integrations/builder/readiness?tenant_id=${tenantId}&workflow_keys=faq`, { as: member });
    expect(ready.body.ready).toBe(true);
    // Without workflow_keys: every configured workflow.
    const all = await stack.request('GET', `/v4/integrations/builder/readiness?tenant_id=${tenantId}`, { as: member });
    expect(all.body.workflows.map((w: any) => w.workflowKey).sort()).toEqual(['faq', 'intake-draft', 'support']);
  });

  it('blocks every workflow of a tenant that is not active', async () => {
    await sql`update tenants set status = 'provisioning' where id = ${tenantId}::uuid`;
    try {
      expect(await status('faq')).toMatchObject({ status: 'blocked', reason: 'the tenant is provisioning, not active' });
    } finally {
      await sql`update tenants set status = 'active' where id = ${tenantId}::uuid`;
    }
  });

  it.each<[string, string, string, unknown, number]>([
    ['another tenant’s status', 'GET', '/v4/workflows/runtime/faq/status?tenant_id=TENANT', undefined, 403],
    ['a request for another tenant', 'POST', '/v4/workflows/runtime-requests', { tenant_id: 'TENANT', workflow_key: 'faq' }, 403],
    ['another tenant’s readiness', 'GET', '/v4/integrations/builder/readiness?tenant_id=TENANT', undefined, 403],
    ['a request without a workflow key', 'POST', '/v4/workflows/runtime-requests', { reason: 'x' }, 400],
    ['a request with an unknown field', 'POST', '/v4/workflows/runtime-requests', { workflow_key: 'faq', priority: 'high' }, 400],
    ['too many workflow keys', 'GET', `/v4/integrations/builder/readiness?workflow_keys=${Array.from({ length: 51 }, (_, i) => `w${i}`).join(',')}`, undefined, 400],
  ])('refuses %s', async (label, method, path, body, expected) => {
    const as = expected === 403 ? GLOBEX_ADMIN : member;
    const fill = (value: unknown) => JSON.parse(JSON.stringify(value ?? null).replaceAll('TENANT', tenantId)) ?? undefined;
    const response = await stack.request(method, path.replace('TENANT', tenantId), { as, body: fill(body) });
    expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBe(expected);
  });
});
