import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { REFUSED_SAMPLE_SIZE } from '../../control-plane/webhooks/webhooks.schema.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { copyExampleWorkflows, createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';

/** Deliveries an endpoint takes per minute in this file's stack. */
const BUDGET = 200;
/** Each test sends a few hundred deliveries, on a machine other suites share. */
const FLOOD_TIMEOUT_MS = 120_000;

/**
 * Floods of unsigned deliveries: one budget per endpoint whatever the path's spelling, a bounded
 * store of what was refused (counts and a sample), and nothing taken from sign-in or other tenants.
 */
describe('v4 webhook floods', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let noisy: TenantFixture;
  let quiet: TenantFixture;

  const endpoints = (tenant: TenantFixture) => `/v4/webhooks/${tenant.id}/endpoints`;

  /** An unsigned delivery, as a flood sends it; the path as given. */
  const unsigned = (path: string) =>
    stack.request('POST', path, { rawBody: JSON.stringify({ flood: randomUUID() }), headers: { 'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)) } });

  async function createEndpoint(tenant: TenantFixture, source: string) {
    const created = await stack.request('POST', endpoints(tenant), { as: tenant.admin.email, body: { source, workflowId: 'active-projects' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }

  const storedRefusals = async (tenant: TenantFixture, source: string) =>
    (
      await sql<[{ n: number }]>`select count(*)::int as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where e.tenant_id = ${tenant.id}::uuid and e.source = ${source} and d.status = 'rejected'`
    )[0].n;

  /** The counters of `svc_db_transactions_total` by pool, from the process that runs the control plane. */
  async function transactionsByPool(): Promise<Record<string, number>> {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    return Object.fromEntries([...text.matchAll(/^svc_db_transactions_total\{pool="([a-z]+)"\} (\d+)$/gm)].map(([, pool, n]) => [pool!, Number(n)]));
  }

  beforeAll(async () => {
    noisy = await createTenantFixture(sql, 'flood-noisy', { plan: 'team' });
    quiet = await createTenantFixture(sql, 'flood-quiet', { plan: 'team' });
    stack = await startTestStack({
      devUsers: [...DEV_USERS, noisy.admin, noisy.member, quiet.admin, quiet.member],
      rateLimits: { policies: { webhooks: { points: BUDGET, durationSeconds: 60 } } },
    });
    for (const tenant of [noisy, quiet]) await copyExampleWorkflows(sql, tenant.id);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it('spends one budget per endpoint whatever the spelling of its path: id or slug, any letter case, a trailing slash', async () => {
    await createEndpoint(noisy, 'budget');
    const mixedCase = [...noisy.id].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    const spellings = [noisy.id, noisy.id.toUpperCase(), mixedCase, noisy.slug, `${noisy.id}/`, `${noisy.slug}/`].map((tenant) =>
      tenant.endsWith('/') ? `/v4/webhooks/${tenant.slice(0, -1)}/budget/` : `/v4/webhooks/${tenant}/budget`,
    );
    const answers: number[] = [];
    for (let i = 0; i < BUDGET; i += spellings.length) {
      answers.push(...(await Promise.all(spellings.map((path) => unsigned(path)))).map((r) => r.status));
    }
    // Each spelling reached the endpoint (refused: unsigned) until the one budget was spent.
    expect(answers.filter((s) => s === 401)).toHaveLength(BUDGET);
    expect(answers.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
    for (const path of spellings) {
      const refused = await unsigned(path);
      expect(refused.status, path).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(refused.headers.get('x-ratelimit-remaining'), path).toBe('0');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Another endpoint's budget is its own.
    await createEndpoint(noisy, 'other');
    expect((await unsigned(`/v4/webhooks/${noisy.id}/other`)).status).toBe(401);
  }, FLOOD_TIMEOUT_MS);

  it('stores at most a sample of refused deliveries, and counts every one', async () => {
    await createEndpoint(noisy, 'flooded');
    const flood = REFUSED_SAMPLE_SIZE + 50;
    const answers = await Promise.all(Array.from({ length: flood }, () => unsigned(`/v4/webhooks/${noisy.slug}/flooded`)));
    expect(answers.every((r) => r.status === 401)).toBe(true);

    expect(await storedRefusals(noisy, 'flooded')).toBe(REFUSED_SAMPLE_SIZE);
    const refusals = await stack.request('GET', `${endpoints(noisy)}/flooded/refusals`, { as: noisy.admin.email });
    expect(refusals.status, JSON.stringify(refusals.body)).toBe(200);
    expect(refusals.body.refused).toBe(flood);
    expect(refusals.body.data.reduce((sum: number, window: any) => sum + window.refused, 0)).toBe(flood);
    expect(refusals.body.data[0].reasons).toEqual({ signature_missing: flood });

    // The sample is the newest refusals, listed as before.
    const page = await stack.request('GET', `${endpoints(noisy)}/flooded/deliveries?status=rejected&limit=100`, { as: noisy.admin.email });
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(REFUSED_SAMPLE_SIZE);
    expect(page.body.data.every((d: any) => d.status === 'rejected' && d.reason === 'signature_missing')).toBe(true);
    const marker = randomUUID();
    expect((await stack.request('POST', `/v4/webhooks/${noisy.id}/flooded`, { rawBody: '{}', headers: { 'x-webhook-id': marker } })).status).toBe(401);
    const newest = await stack.request('GET', `${endpoints(noisy)}/flooded/deliveries?status=rejected&limit=1`, { as: noisy.admin.email });
    expect(newest.body.data[0]).toMatchObject({ externalId: marker, reason: 'signature_missing' });
    expect(await storedRefusals(noisy, 'flooded')).toBe(REFUSED_SAMPLE_SIZE);

    // Removing the endpoint removes its counts with its deliveries.
    const [{ id }] = await sql<[{ id: string }]>`select id::text as id from webhook_endpoints where tenant_id = ${noisy.id}::uuid and source = 'flooded'`;
    const counts = async () => (await sql<[{ n: number }]>`select count(*)::int as n from webhook_refusal_counts where endpoint_id = ${id}::uuid`)[0].n;
    expect(await counts()).toBeGreaterThan(0);
    expect((await stack.request('DELETE', `${endpoints(noisy)}/flooded`, { as: noisy.admin.email })).status).toBe(204);
    expect(await counts()).toBe(0);
  }, FLOOD_TIMEOUT_MS);

  it("changes nothing for another tenant's sign-in and requests while it runs", async () => {
    await createEndpoint(noisy, 'noisy');
    const before = await transactionsByPool();
    const floodSize = BUDGET - 20;
    const flood = Promise.all(Array.from({ length: floodSize }, () => unsigned(`/v4/webhooks/${noisy.id}/noisy`)));
    // Meanwhile: a fresh sign-in of the other tenant's administrator, and its requests with that token.
    const signIn = await loginWithPkce({ issuer: stack.url, email: quiet.admin.email });
    expect(signIn.accessToken).toEqual(expect.any(String));
    const served = await Promise.all([
      stack.request('GET', '/v4/identity/me', { token: signIn.accessToken }),
      stack.request('GET', endpoints(quiet), { token: signIn.accessToken }),
      ...Array.from({ length: 8 }, () => stack.request('GET', '/v4/identity/me', { token: signIn.accessToken })),
    ]);
    for (const answer of served) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(served[0].body.email).toBe(quiet.admin.email);
    expect(served[1].body).toEqual({ data: [] });

    const floodAnswers = await flood;
    expect(floodAnswers.every((r) => r.status === 401)).toBe(true);
    const counted = await stack.request('GET', `${endpoints(noisy)}/noisy/refusals`, { as: noisy.admin.email });
    expect(counted.body.refused).toBe(floodSize);

    // The control plane's pools (another process with the http link): the flood's deliveries took
    // their connections from the webhook intake pool, not from the owner pool that sign-in and
    // sessions use nor from the tenant pool of authenticated requests; those did far less work
    // than one transaction per delivery.
    if (inject('controlPlaneMode') !== 'http') {
      const after = await transactionsByPool();
      const delta = (pool: string) => (after[pool] ?? 0) - (before[pool] ?? 0);
      expect(delta('intake')).toBeGreaterThanOrEqual(floodSize);
      expect(delta('system')).toBeLessThan(floodSize);
      expect(delta('tenant')).toBeLessThan(floodSize);
    }
  }, FLOOD_TIMEOUT_MS);
});
