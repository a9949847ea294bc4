import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { webhookSignature } from '../../control-plane/webhooks/webhook-signature.ts';
import { assertConforms } from '../harness/conformance.ts';
import { GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { copyExampleWorkflows, createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
const LEGACY_SECRET = `whsec_${randomBytes(32).toString('base64url')}`;

/** v4 webhooks: endpoints, signed deliveries that start workflows, refusals recorded, replays, isolation. */
describe('v4 webhooks', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let west: TenantFixture;
  let east: TenantFixture;
  let free: TenantFixture;
  let secret: string;

  const endpoints = (tenant: TenantFixture) => `/v4/webhooks/${tenant.id}/endpoints`;
  const now = () => String(Math.floor(Date.now() / 1000));

  /** Posts a delivery as an outside system does: no token; signed with `sign` (a secret) unless `signature` is given. */
  async function deliver(
    tenant: TenantFixture | string,
    source: string,
    body: string,
    options: { sign?: string; timestamp?: string; signature?: string; id?: string; headers?: Record<string, string> } = {},
  ) {
    const timestamp = options.timestamp ?? now();
    const signature = options.signature ?? (options.sign ? `sha256=${webhookSignature(options.sign, timestamp, Buffer.from(body))}` : undefined);
    return stack.request('POST', `/v4/webhooks/${typeof tenant === 'string' ? tenant : tenant.id}/${source}`, {
      rawBody: body,
      headers: {
        'x-webhook-timestamp': timestamp,
        ...(signature ? { 'x-webhook-signature': signature } : {}),
        ...(options.id ? { 'x-webhook-id': options.id } : {}),
        ...options.headers,
      },
    });
  }

  async function createEndpoint(tenant: TenantFixture, body: Record<string, unknown>) {
    const created = await stack.request('POST', endpoints(tenant), { as: tenant.admin.email, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  const deliveries = async (tenant: TenantFixture, source: string, query = '') => {
    const page = await stack.request('GET', `${endpoints(tenant)}/${source}/deliveries${query}`, { as: tenant.admin.email });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return page.body;
  };

  const execution = (tenant: TenantFixture, id: string) =>
    stack.request('GET', `${V3}/orchestrate/executions/${id}`, { as: tenant.admin.email, headers: { 'x-tenant-id': tenant.id } });

  beforeAll(async () => {
    west = await createTenantFixture(sql, 'wh-west', { plan: 'team' });
    east = await createTenantFixture(sql, 'wh-east', { plan: 'team' });
    free = await createTenantFixture(sql, 'wh-free', { plan: 'free' });
    // An endpoint as a version that stored secrets in plain text left it: sealed when the control plane starts.
    await sql`insert into webhook_endpoints (tenant_id, source, workflow_id, secret, secret_hint)
      values (${east.id}::uuid, 'legacy', 'active-projects', ${LEGACY_SECRET}, ${`${LEGACY_SECRET.slice(0, 10)}…`})`;
    stack = await startTestStack({ devUsers: [...DEV_USERS, ...[west, east, free].flatMap((t) => [t.admin, t.member])] });
    for (const tenant of [west, east, free]) await copyExampleWorkflows(sql, tenant.id);
    const created = await createEndpoint(west, { source: 'billing', workflowId: 'active-projects', description: 'Billing events' });
    secret = created.secret;
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it('creates an endpoint whose secret is shown once, and lists and reads it without the secret', async () => {
    const created = await createEndpoint(west, { source: 'crm', workflowId: 'project-briefing', toleranceSeconds: 120 });
    expect(created).toMatchObject({
      tenantId: west.id,
      source: 'crm',
      workflowId: 'project-briefing',
      description: '',
      enabled: true,
      toleranceSeconds: 120,
      maxBodyBytes: 1_048_576,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      secretHint: `${created.secret.slice(0, 10)}…`,
    });
    const list = await stack.request('GET', endpoints(west), { as: west.admin.email });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.source)).toEqual(['billing', 'crm']);
    const read = await stack.request('GET', `${endpoints(west)}/crm`, { as: west.admin.email });
    expect(read.status).toBe(200);
    for (const shown of [...list.body.data, read.body]) expect(shown).not.toHaveProperty('secret');
    expect(JSON.stringify([list.body, read.body])).not.toContain(created.secret);
    // Not even the tenants' own database role reads it.
    await expect(
      sql.begin(async (tx) => {
        await tx`select set_config('svc.tenant_id', ${west.id}, true), set_config('role', 'svc_app', true)`;
        return tx`select secret from webhook_endpoints`;
      }),
    ).rejects.toThrow(/permission denied/);

    const changed = await stack.request('PATCH', `${endpoints(west)}/crm`, { as: west.admin.email, body: { description: 'CRM', enabled: false } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ description: 'CRM', enabled: false, workflowId: 'project-briefing' });
    expect((await stack.request('DELETE', `${endpoints(west)}/crm`, { as: west.admin.email })).status).toBe(204);
    expect((await stack.request('GET', `${endpoints(west)}/crm`, { as: west.admin.email })).status).toBe(404);
  });

  it('verifies a signed delivery over its exact bytes, stores it, and starts the workflow with the payload', async () => {
    // Spacing and a non-ASCII character: the signature covers the bytes as sent, not a re-serialisation.
    const body = '{ "invoice": "INV-1",  "customer": "Zoë", "amount": 12.5 }';
    const delivered = await deliver(west, 'billing', body, { sign: secret, id: `evt-${randomUUID()}`, headers: { 'user-agent': 'billing-system/1.0' } });
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(202);
    expect(delivered.body).toEqual({ deliveryId: expect.any(String), status: 'accepted', executionId: expect.any(String) });

    const run = await until(() => execution(west, delivered.body.executionId), (r) => r.status === 200 && r.body.state === 'completed');
    expect(run.body).toMatchObject({
      workflowId: 'active-projects',
      input: { invoice: 'INV-1', customer: 'Zoë', amount: 12.5 },
      metadata: { webhook: { deliveryId: delivered.body.deliveryId, source: 'billing' } },
    });

    const stored = await stack.request('GET', `/v4/webhooks/${west.id}/deliveries/${delivered.body.deliveryId}`, { as: west.admin.email });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      id: delivered.body.deliveryId,
      source: 'billing',
      status: 'accepted',
      reason: null,
      executionId: delivered.body.executionId,
      sizeBytes: Buffer.byteLength(body),
      contentType: 'application/json',
      userAgent: 'billing-system/1.0',
      payload: { invoice: 'INV-1', customer: 'Zoë', amount: 12.5 },
      replayOf: null,
    });
  });

  it('refuses a delivery seen before, by signature or by delivery id, and records the attempt', async () => {
    const id = `evt-${randomUUID()}`;
    const timestamp = now();
    const body = JSON.stringify({ invoice: 'INV-2' });
    const first = await deliver(west, 'billing', body, { sign: secret, timestamp, id });
    expect(first.status).toBe(202);
    const again = await deliver(west, 'billing', body, { sign: secret, timestamp, id });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    // The same delivery id, re-signed later: a sender's retry of a delivery already taken.
    const retried = await deliver(west, 'billing', body, { sign: secret, timestamp: String(Number(timestamp) + 1), id });
    expect(retried.status).toBe(409);
    // The same signature without a delivery id.
    const bare = JSON.stringify({ invoice: 'INV-3' });
    const ts = now();
    expect((await deliver(west, 'billing', bare, { sign: secret, timestamp: ts })).status).toBe(202);
    expect((await deliver(west, 'billing', bare, { sign: secret, timestamp: ts })).status).toBe(409);

    const page = await deliveries(west, 'billing', '?status=rejected&limit=100');
    expect(page.data.filter((d: any) => d.reason === 'replayed' && d.externalId === id)).toHaveLength(2);
    expect(page.data.every((d: any) => d.status === 'rejected' && d.executionId === null)).toBe(true);
    const [{ runs }] = await sql<[{ runs: number }]>`select count(*)::int as runs from executions where tenant_id = ${west.id}::uuid and metadata #>> '{webhook,source}' = 'billing' and input ->> 'invoice' in ('INV-2', 'INV-3')`;
    expect(runs).toBe(2);
  });

  it.each<[string, (body: string) => Parameters<typeof deliver>[3], number, string]>([
    ['a signature by another secret', () => ({ sign: 'whsec_not-the-secret' }), 401, 'signature_invalid'],
    ['no signature', () => ({}), 401, 'signature_missing'],
    ['a signature of another form', () => ({ signature: 'v1,abc' }), 401, 'signature_invalid'],
    ['a signature of another body', () => ({ signature: `sha256=${webhookSignature('x', now(), Buffer.from('{}'))}` }), 401, 'signature_invalid'],
    ['a stale timestamp, correctly signed', () => ({ get sign() { return secret; }, timestamp: String(Math.floor(Date.now() / 1000) - 3600) }), 401, 'timestamp_stale'],
    ['a timestamp from the future, correctly signed', () => ({ get sign() { return secret; }, timestamp: String(Math.floor(Date.now() / 1000) + 3600) }), 401, 'timestamp_stale'],
    ['a timestamp that is no Unix time', () => ({ get sign() { return secret; }, timestamp: 'yesterday' }), 401, 'timestamp_invalid'],
  ])('refuses %s, and records it', async (_label, options, status, reason) => {
    const marker = randomUUID();
    const refused = await deliver(west, 'billing', JSON.stringify({ marker }), { ...options(''), id: marker });
    expect(refused.status, JSON.stringify(refused.body)).toBe(status);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    const page = await deliveries(west, 'billing', '?status=rejected&limit=100');
    const recorded = page.data.find((d: any) => d.externalId === marker);
    expect(recorded).toMatchObject({ status: 'rejected', reason, executionId: null, message: refused.body.error.message });
    const detail = await stack.request('GET', `/v4/webhooks/${west.id}/deliveries/${recorded.id}`, { as: west.admin.email });
    expect(detail.body.payload).toBeNull();
  });

  it('refuses a body over the endpoint limit, declared or streamed, and a verified body that is no JSON object; records each', async () => {
    await createEndpoint(west, { source: 'small', workflowId: 'active-projects', maxBodyBytes: 1024 });
    const small = (await stack.request('POST', `${endpoints(west)}/small/rotate-secret`, { as: west.admin.email })).body.secret;
    const big = JSON.stringify({ text: 'x'.repeat(2000) });
    const declared = await deliver(west, 'small', big, { sign: small, id: 'declared' });
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 1024 } });

    // Chunked: no Content-Length, so the limit is found by reading.
    const timestamp = now();
    const streamed = await fetch(`${stack.url}/v4/webhooks/${west.slug}/small`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-timestamp': timestamp, 'x-webhook-signature': `sha256=${webhookSignature(small, timestamp, Buffer.from(big))}`, 'x-webhook-id': 'streamed' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < big.length; i += 500) controller.enqueue(new TextEncoder().encode(big.slice(i, i + 500)));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    const streamedBody = await streamed.json();
    assertConforms({ method: 'POST', path: `/v4/webhooks/${west.slug}/small`, status: streamed.status, headers: streamed.headers, body: streamedBody });

    const notAnObject = await deliver(west, 'small', '[1, 2, 3]', { sign: small, id: 'array' });
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.body.error.details).toMatchObject({ field: '(body)' });

    const page = await deliveries(west, 'small');
    const byId = Object.fromEntries(page.data.map((d: any) => [d.externalId, d]));
    expect(byId.declared).toMatchObject({ status: 'rejected', reason: 'payload_too_large', sizeBytes: Buffer.byteLength(big) });
    expect(byId.streamed).toMatchObject({ status: 'rejected', reason: 'payload_too_large' });
    expect(byId.streamed.sizeBytes).toBeGreaterThan(1024);
    expect(byId.array).toMatchObject({ status: 'rejected', reason: 'invalid_body' });
    expect(page.total).toBe(3);
  });

  it('rotates the secret with revokePrevious: the old one stops working at once, the new one works', async () => {
    await createEndpoint(west, { source: 'rotating', workflowId: 'active-projects' });
    const first = (await stack.request('POST', `${endpoints(west)}/rotating/rotate-secret`, { as: west.admin.email })).body.secret;
    const rotated = await stack.request('POST', `${endpoints(west)}/rotating/rotate-secret`, { as: west.admin.email, body: { revokePrevious: true } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(first);
    expect((await deliver(west, 'rotating', '{"n":1}', { sign: first })).status).toBe(401);
    expect((await deliver(west, 'rotating', '{"n":1}', { sign: rotated.body.secret })).status).toBe(202);
    expect(rotated.body.previousSecretExpiresAt).toBeNull();
  });

  it('rotates the secret with an overlap: the previous one is accepted for 24 hours, then refused', async () => {
    const created = await createEndpoint(west, { source: 'overlapping', workflowId: 'active-projects' });
    const rotated = await stack.request('POST', `${endpoints(west)}/overlapping/rotate-secret`, { as: west.admin.email });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const within = await deliver(west, 'overlapping', '{"n":"old, within"}', { sign: created.secret });
    expect(within.status, JSON.stringify(within.body)).toBe(202);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.secretRotatedAt)).toBe(24 * 3600 * 1000);
    expect((await deliver(west, 'overlapping', '{"n":"new"}', { sign: rotated.body.secret })).status).toBe(202);

    // The window has passed (its end moved back rather than waited for).
    await sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where tenant_id = ${west.id}::uuid and source = 'overlapping'`;
    const after = await deliver(west, 'overlapping', '{"n":"old, after"}', { sign: created.secret, id: 'old-after' });
    expect(after.status).toBe(401);
    expect((await deliver(west, 'overlapping', '{"n":"new, after"}', { sign: rotated.body.secret })).status).toBe(202);
    expect((await deliveries(west, 'overlapping', '?status=rejected')).data[0]).toMatchObject({ externalId: 'old-after', reason: 'signature_invalid' });

    // A body that is no JSON object, or an unknown option, is refused and rotates nothing.
    for (const body of [{ revokePrevious: 'yes' }, { overlap: 60 }]) {
      const refused = await stack.request('POST', `${endpoints(west)}/overlapping/rotate-secret`, { as: west.admin.email, body });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    }
    expect((await deliver(west, 'overlapping', '{"n":"still"}', { sign: rotated.body.secret })).status).toBe(202);
  });

  it('stores secrets sealed with the operator key: no plain text in the column, the previous one sealed too; plain rows of before are sealed at start', async () => {
    const created = await createEndpoint(west, { source: 'sealed', workflowId: 'active-projects' });
    const rotated = (await stack.request('POST', `${endpoints(west)}/sealed/rotate-secret`, { as: west.admin.email })).body;
    const [row] = await sql<{ secret: string; previous: string }[]>`
      select secret, previous_secret as previous from webhook_endpoints where tenant_id = ${west.id}::uuid and source = 'sealed'`;
    for (const [stored, plain] of [[row!.secret, rotated.secret], [row!.previous, created.secret]] as const) {
      expect(stored).toMatch(/^sealed:v1:/);
      expect(stored).not.toContain(plain);
      expect(stored).not.toContain(plain.slice('whsec_'.length, 20));
    }
    const plainRows = await sql`select source from webhook_endpoints
      where tenant_id in (${west.id}::uuid, ${east.id}::uuid) and (secret like 'whsec\\_%' or previous_secret like 'whsec\\_%')`;
    expect(plainRows).toEqual([]);

    // The endpoint written in plain text before this version: sealed now, and its secret still works.
    const [legacy] = await sql<{ secret: string }[]>`select secret from webhook_endpoints where tenant_id = ${east.id}::uuid and source = 'legacy'`;
    expect(legacy!.secret).toMatch(/^sealed:v1:/);
    expect(legacy!.secret).not.toContain(LEGACY_SECRET);
    expect((await deliver(east, 'legacy', '{"n":"legacy"}', { sign: LEGACY_SECRET })).status).toBe(202);
  });

  it('replays a verified delivery as a new one, started again; a refused one has nothing to replay', async () => {
    const delivered = await deliver(west, 'billing', JSON.stringify({ invoice: 'INV-R' }), { sign: secret });
    expect(delivered.status).toBe(202);
    const replayed = await stack.request('POST', `/v4/webhooks/${west.id}/deliveries/${delivered.body.deliveryId}/replay`, { as: west.admin.email });
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(201);
    expect(replayed.body).toMatchObject({ status: 'accepted', replayOf: delivered.body.deliveryId, source: 'billing', executionId: expect.any(String) });
    expect(replayed.body.executionId).not.toBe(delivered.body.executionId);
    const run = await until(() => execution(west, replayed.body.executionId), (r) => r.status === 200 && r.body.state === 'completed');
    expect(run.body.input).toEqual({ invoice: 'INV-R' });
    expect(run.body.metadata.webhook).toEqual({ deliveryId: replayed.body.id, source: 'billing', replayOf: delivered.body.deliveryId });

    const refused = (await deliveries(west, 'billing', '?status=rejected')).data[0];
    const nothing = await stack.request('POST', `/v4/webhooks/${west.id}/deliveries/${refused.id}/replay`, { as: west.admin.email });
    expect(nothing.status).toBe(409);
  });

  it('keeps a verified delivery whose workflow cannot start as failed, to be replayed once it can', async () => {
    await createEndpoint(east, { source: 'orders', workflowId: 'project-briefing' });
    const orders = (await stack.request('POST', `${endpoints(east)}/orders/rotate-secret`, { as: east.admin.email })).body.secret;
    await sql`update workflow_definitions set id = 'project-briefing-away' where tenant_id = ${east.id}::uuid and id = 'project-briefing'`;
    const delivered = await deliver(east, 'orders', '{"order":7}', { sign: orders });
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(202);
    expect(delivered.body).toMatchObject({ status: 'failed', executionId: null });
    const stored = (await stack.request('GET', `/v4/webhooks/${east.id}/deliveries/${delivered.body.deliveryId}`, { as: east.admin.email })).body;
    expect(stored).toMatchObject({ status: 'failed', reason: 'workflow_unavailable', message: 'workflow "project-briefing" not found', payload: { order: 7 } });
    await sql`update workflow_definitions set id = 'project-briefing' where tenant_id = ${east.id}::uuid and id = 'project-briefing-away'`;
    const replayed = await stack.request('POST', `/v4/webhooks/${east.id}/deliveries/${delivered.body.deliveryId}/replay`, { as: east.admin.email });
    expect(replayed.status).toBe(201);
    expect(replayed.body).toMatchObject({ status: 'accepted', replayOf: delivered.body.deliveryId, executionId: expect.any(String) });
  });

  it("never takes one tenant's signature for another's endpoint, and keeps each tenant's deliveries to itself", async () => {
    await createEndpoint(east, { source: 'billing', workflowId: 'active-projects' });
    const marker = randomUUID();
    // Signed with west's secret, sent to east's endpoint of the same source name.
    const crossed = await deliver(east, 'billing', JSON.stringify({ marker }), { sign: secret, id: marker });
    expect(crossed.status).toBe(401);
    const eastSide = await deliveries(east, 'billing');
    expect(eastSide.data.find((d: any) => d.externalId === marker)).toMatchObject({ status: 'rejected', reason: 'signature_invalid' });
    const westSide = await deliveries(west, 'billing', '?limit=100');
    expect(westSide.data.some((d: any) => d.externalId === marker)).toBe(false);

    const westDelivery = westSide.data.find((d: any) => d.status === 'accepted');
    for (const [method, path] of [
      ['GET', endpoints(west)],
      ['GET', `${endpoints(west)}/billing`],
      ['GET', `${endpoints(west)}/billing/deliveries`],
      ['POST', `${endpoints(west)}/billing/rotate-secret`],
      ['DELETE', `${endpoints(west)}/billing`],
      ['GET', `/v4/webhooks/${west.id}/deliveries/${westDelivery.id}`],
      ['POST', `/v4/webhooks/${west.id}/deliveries/${westDelivery.id}/replay`],
    ] as const) {
      for (const as of [east.admin.email, GLOBEX_ADMIN]) {
        const refused = await stack.request(method, path, { as });
        expect(refused.status, `${as} ${method} ${path}`).toBe(403);
      }
    }
    // Named through east's own path, west's delivery does not exist (row-level security).
    for (const [method, path] of [
      ['GET', `/v4/webhooks/${east.id}/deliveries/${westDelivery.id}`],
      ['POST', `/v4/webhooks/${east.id}/deliveries/${westDelivery.id}/replay`],
    ] as const) {
      expect((await stack.request(method, path, { as: east.admin.email })).status).toBe(404);
    }
    // A member is no administrator.
    expect((await stack.request('GET', endpoints(west), { as: west.member.email })).status).toBe(403);
    expect((await stack.request('GET', `${endpoints(west)}/billing`, { as: west.admin.email })).status).toBe(200);
  });

  it('refuses a disabled endpoint and a tenant without the webhooks capability, naming it; records both', async () => {
    await createEndpoint(east, { source: 'paused', workflowId: 'active-projects', enabled: false });
    const paused = (await stack.request('POST', `${endpoints(east)}/paused/rotate-secret`, { as: east.admin.email })).body.secret;
    const disabled = await deliver(east, 'paused', '{"n":1}', { sign: paused });
    expect(disabled.status).toBe(403);
    expect((await deliveries(east, 'paused')).data[0]).toMatchObject({ status: 'rejected', reason: 'endpoint_disabled' });

    const refusedCreate = await stack.request('POST', endpoints(free), { as: free.admin.email, body: { source: 'billing', workflowId: 'active-projects' } });
    expect(refusedCreate.status).toBe(403);
    expect(refusedCreate.body.error.message).toContain('capability webhooks is not available to this tenant');

    const off = await stack.request('PUT', `/v4/platform/capabilities/overrides/${west.id}/webhooks`, { as: PLATFORM_ADMIN, body: { allowed: false, reason: 'billing review' } });
    expect(off.status).toBe(200);
    try {
      const refused = await deliver(west, 'billing', '{"n":2}', { sign: secret, id: 'while-refused' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('capability webhooks');
      const recorded = (await deliveries(west, 'billing', '?status=rejected&limit=100')).data.find((d: any) => d.externalId === 'while-refused');
      expect(recorded).toMatchObject({ reason: 'capability_refused' });
    } finally {
      await stack.request('DELETE', `/v4/platform/capabilities/overrides/${west.id}/webhooks`, { as: PLATFORM_ADMIN });
    }
  });

  it('answers 404 for an endpoint that does not exist, by tenant id or slug, and records nothing', async () => {
    // This file's tenants only: other files' deliveries may run meanwhile (the database is the run's).
    const recorded = () => sql<[{ n: number }]>`select count(*)::int as n from webhook_deliveries where tenant_id in (${west.id}::uuid, ${east.id}::uuid, ${free.id}::uuid)`;
    const before = await recorded();
    expect((await deliver(west, 'nothing-here', '{}', { sign: secret })).status).toBe(404);
    expect((await deliver(west.slug, 'nothing-here', '{}', { sign: secret })).status).toBe(404);
    expect((await deliver('no-such-tenant', 'billing', '{}', { sign: secret })).status).toBe(404);
    expect((await recorded())[0].n).toBe(before[0].n);
    // By slug, the same endpoint as by id.
    expect((await deliver(west.slug, 'billing', '{"by":"slug"}', { sign: secret })).status).toBe(202);
  });

  it.each<[string, string, string, unknown, string]>([
    ['a reserved source', 'POST', '', { source: 'endpoints', workflowId: 'active-projects' }, 'source'],
    ['a source that is no kebab-case', 'POST', '', { source: 'Billing Events', workflowId: 'active-projects' }, 'source'],
    ['no workflow', 'POST', '', { source: 'nowork' }, 'workflow_id'],
    ['a workflow the tenant does not have', 'POST', '', { source: 'nowork', workflowId: 'no-such-workflow' }, 'workflow_id'],
    ['a tolerance of seconds', 'POST', '', { source: 'quick', workflowId: 'active-projects', toleranceSeconds: 5 }, 'tolerance_seconds'],
    ['a limit above the API limit', 'POST', '', { source: 'huge', workflowId: 'active-projects', maxBodyBytes: 10_000_000 }, 'max_body_bytes'],
    ['an unknown field', 'POST', '', { source: 'x', workflowId: 'active-projects', secret: 'mine' }, 'secret'],
    ['an update that changes nothing', 'PATCH', '/billing', {}, '(body)'],
    ['an update naming the source in the body', 'PATCH', '/billing', { source: 'other' }, 'source'],
  ])('refuses %s with 400 naming the field', async (_label, method, suffix, body, field) => {
    const refused = await stack.request(method, `${endpoints(west)}${suffix}`, { as: west.admin.email, body });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.details.field).toBe(field);
  });

  it('refuses a second endpoint for a source, a bad page and a bad delivery id', async () => {
    const again = await stack.request('POST', endpoints(west), { as: west.admin.email, body: { source: 'billing', workflowId: 'active-projects' } });
    expect(again.status).toBe(409);
    expect((await stack.request('GET', `${endpoints(west)}/billing/deliveries?limit=1000`, { as: west.admin.email })).status).toBe(400);
    expect((await stack.request('GET', `${endpoints(west)}/billing/deliveries?status=lost`, { as: west.admin.email })).status).toBe(400);
    expect((await stack.request('GET', `/v4/webhooks/${west.id}/deliveries/not-an-id`, { as: west.admin.email })).status).toBe(400);
    expect((await stack.request('GET', `${endpoints(west)}/nothing-here/deliveries`, { as: west.admin.email })).status).toBe(404);
  });
});
