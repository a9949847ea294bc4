import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { webhookSignature } from '../../control-plane/webhooks/webhook-signature.ts';
import { API_ROUTES, routeKey } from '../../api-edge/routes/index.ts';
import type { Route } from '../../api-edge/routes/route.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { routeCalls, withQuery, type RouteCall } from '../harness/routes.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { PLATFORM_ADMIN } from './fixture.ts';
import { copyExampleWorkflows, createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

/** A free local port. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

interface Answer {
  status: number;
  body: any;
  headers: Headers;
  violations: string | null;
}

/** Where Prism found each violation: in the request, or in the platform's answer. */
interface Violation {
  location: string[];
  message: string;
}

/** A Prism proxy in front of one API of the platform, validating against the document it serves. */
async function startPrism(stack: TestStack, dir: string, version: 'v3' | 'v4'): Promise<{ url: string; process: ChildProcess; log: () => string }> {
  const base = version === 'v3' ? V3 : '/v4';
  const document = (await stack.request('GET', `${base}/openapi.json`, { as: ADMIN })).body;
  // The served document's server is relative; Prism is told where the platform is.
  document.servers = [{ url: `${stack.url}${base}` }];
  await writeFile(join(dir, `${version}.json`), JSON.stringify(document));
  const port = await freePort();
  const child = spawn('node_modules/.bin/prism', ['proxy', join(dir, `${version}.json`), `${stack.url}${base}`, '--host', '127.0.0.1', '--port', String(port), '--errors', 'false'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  await until(async () => log, (text) => /Prism is listening/.test(text), 60_000);
  return { url: `http://127.0.0.1:${port}`, process: child, log: () => log };
}

/**
 * The v3 and v4 documents against an independent validator: Stoplight Prism, in proxy mode in
 * front of the real platform, checks every request and answer against the document the platform
 * serves, and reports what breaks it in the `sl-violations` header. Valid requests must meet none:
 * the data flows sent the ways the routes take them (the version in the body or in `If-Match`, with
 * and without `Idempotency-Key`), and every other area's requests, made valid by creating what
 * they name first. Every declared route's own sample (api-edge/routes, `defineRoute`) goes through
 * too, so that a route added later is checked without anyone listing it here. Streaming answers
 * (server-sent events) are checked for their status and content type only: Prism does not
 * validate the events of a `text/event-stream` body.
 */
describe('v3 and v4 through an independent OpenAPI validator (Prism proxy)', () => {
  let stack: TestStack;
  const prisms: Partial<Record<'v3' | 'v4', Awaited<ReturnType<typeof startPrism>>>> = {};
  let token: string;
  let acme: string;
  let dir: string;
  let own: TenantFixture;
  const sql = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
  const run = randomBytes(3).toString('hex');
  const seen: Array<{ call: string; status: number; violations: string | null }> = [];

  beforeAll(async () => {
    own = await createTenantFixture(sql, 'prism', { plan: 'enterprise' });
    stack = await startTestStack({ devUsers: [...DEV_USERS, own.admin, own.member] });
    // The started stack has seeded acme's example workflows.
    await copyExampleWorkflows(sql, own.id);
    token = await stack.token(ADMIN);
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    dir = await mkdtemp(join(tmpdir(), 'prism-'));
    [prisms.v3, prisms.v4] = await Promise.all([startPrism(stack, dir, 'v3'), startPrism(stack, dir, 'v4')]);
  }, 120_000);
  afterAll(async () => {
    for (const prism of Object.values(prisms)) killProcessGroup(prism.process);
    await stack?.close();
    await sql.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A call through Prism, as the platform's own client makes it: `path` under the API's base (`/v4` by default). */
  async function call(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; form?: FormData; bytes?: string; headers?: Record<string, string>; version?: 'v3' | 'v4'; token?: string | null; sample?: boolean } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? token}`;
    if (options.body !== undefined || options.raw !== undefined) headers['content-type'] = 'application/json';
    if (options.bytes !== undefined) headers['content-type'] = 'application/octet-stream';
    const response = await fetch(`${prisms[options.version ?? 'v4']!.url}${path}`, {
      method,
      headers,
      body: options.form ?? options.bytes ?? options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const text = await response.text();
    const json = text && response.headers.get('content-type')?.includes('json');
    const answer = { status: response.status, body: json ? JSON.parse(text) : text, headers: response.headers, violations: response.headers.get('sl-violations') };
    // A sample may be invalid on purpose (it names nothing, or lacks a field); the sweep judges it itself.
    if (!options.sample) seen.push({ call: `${options.version ?? 'v4'} ${method} ${path}`, status: answer.status, violations: answer.violations });
    return answer;
  }

  const clean = (answer: Answer, status: number) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.violations, `Prism found violations: ${answer.violations}`).toBeNull();
    return answer.body;
  };

  it('finds no violation in the requests and answers of the data flows', async () => {
    const typeName = `Invoice${run}`;
    const created = clean(
      await call('POST', '/data/resources/object-types', {
        body: { tenant_id: acme, name: typeName, schema: { type: 'object', properties: { amount: { type: 'number' }, status: { type: 'string' } } }, search_fields: ['status'] },
      }),
      201,
    );
    clean(await call('PATCH', `/data/resources/object-types/${created.objectTypeId}?tenant_id=${acme}`, { body: { search_fields: ['status'] } }), 200);
    clean(await call('GET', `/data/resources/object-types?tenant_id=${acme}`), 200);

    const base = `/data/resources/${acme}/${created.key}`;
    const resource = clean(await call('POST', base, { body: { data: { amount: 10, status: 'open' } } }), 201);
    const item = `${base}/${resource.id}`;
    clean(await call('GET', item), 200);
    clean(await call('GET', item, { headers: { 'if-none-match': '"1"' } }), 304);
    clean(await call('PUT', item, { body: { data: { amount: 11, status: 'open' }, version: 1 } }), 200);
    clean(await call('PUT', item, { body: { data: { amount: 12, status: 'paid' } }, headers: { 'if-match': '"2"' } }), 200);
    clean(await call('GET', `${base}?limit=10&sort=-amount&where=${encodeURIComponent(JSON.stringify({ status: 'paid' }))}`), 200);
    clean(await call('GET', `${base}?limit=1`), 200);
    clean(await call('POST', `/data/resources/${acme}/query`, { body: { types: [created.key], where: { status: 'paid' }, limit: 10 } }), 200);

    const batch = clean(await call('POST', `${base}/batch/create`, { body: [{ amount: 1 }, { amount: 2 }] }), 201);
    clean(await call('POST', `${base}/batch/create`, { body: { items: [{ amount: 3 }] }, headers: { 'idempotency-key': `prism-${run}` } }), 201);
    const ids = batch.data.map((r: any) => r.id);
    clean(await call('POST', `${base}/batch/update`, { body: { items: batch.data.map((r: any) => ({ id: r.id, data: { amount: 5 }, version: r.version })) } }), 200);
    clean(await call('POST', `${base}/batch/delete`, { body: { ids } }), 200);
    clean(await call('DELETE', item, { headers: { 'if-match': '"3"' } }), 204);

    const form = new FormData();
    form.append('tenant_id', acme);
    form.append('processing_mode', 'full');
    form.append('files', new Blob(['Invoices are due in thirty days.'], { type: 'text/plain' }), 'terms.txt');
    const uploaded = clean(await call('POST', '/data/documents/upload', { form }), 201);
    clean(await call('GET', `/data/documents/records/${uploaded.data[0].id}?tenant_id=${acme}`), 200);
  });

  it("finds no violation in seed 001's other data requests: a batch of one object, aggregate, search, history, a file property, storage, indexing", async () => {
    const created = clean(
      await call('POST', '/data/resources/object-types', {
        body: {
          tenant_id: acme,
          name: `Ledger${run}`,
          schema: { type: 'object', properties: { amount: { type: 'number' }, status: { type: 'string' } } },
          search_fields: ['status'],
          file_properties: { notes: { maxSize: 1000, contentTypes: ['text/plain'] } },
        },
      }),
      201,
    );
    const base = `/data/resources/${acme}/${created.key}`;
    // Seed 001: a batch create takes an array, `{items: [...]}`, or a single object.
    const single = clean(await call('POST', `${base}/batch/create`, { body: { amount: 7, status: 'open' } }), 201);
    const entry = single.data[0];
    clean(await call('POST', `${base}/aggregate`, { body: { group_by: ['status'], metrics: { n: { count: '*' }, total: { sum: 'amount' } }, where: { status: 'open' }, limit: 10 } }), 200);
    clean(await call('POST', `/data/resources/${acme}/search`, { body: { query: 'open', types: [created.key], mode: 'fulltext', limit: 5 } }), 200);
    clean(await call('POST', `/data/resources/${acme}/search`, { body: { query: 'open' } }), 200);
    clean(await call('GET', `${base}/${entry.id}/history`), 200);
    clean(await call('POST', `${base}/${entry.id}/files/notes?filename=notes.txt`, { bytes: 'Paid in cash.' }), 200);
    clean(await call('GET', `${base}/${entry.id}/files/notes`), 200);
    clean(await call('DELETE', `${base}/${entry.id}/files/notes`), 204);

    clean(await call('GET', `/data/resources/${acme}/storage`), 200);
    clean(await call('GET', `/data/resources/${acme}/storage/doctor`), 200);
    // Seed 001: `mongodb` is a backend name, normalised to `documentdb`.
    clean(await call('POST', `/data/resources/${acme}/storage/provision`, { body: { backend: 'mongodb', dry_run: true } }), 200);
    clean(await call('POST', `/data/resources/${acme}/storage/provision?backend=mongodb&dry_run=true`), 200);
    clean(await call('POST', `/data/resources/${acme}/storage/sync-schema`, { body: { backend: 'search', dry_run: true } }), 200);

    const form = new FormData();
    form.append('tenant_id', acme);
    form.append('processing_mode', 'full');
    form.append('files', new Blob(['Ledgers close at month end.'], { type: 'text/plain' }), 'close.txt');
    const uploaded = clean(await call('POST', '/data/documents/upload', { form }), 201);
    const classify = new FormData();
    classify.append('tenant_id', acme);
    classify.append('processing_mode', 'classification');
    classify.append('files', new Blob(['Invoice 42: 10 EUR, due in thirty days.'], { type: 'text/plain' }), 'invoice.txt');
    clean(await call('POST', '/data/documents/classify', { form: classify }), 201);
    // An upload's own job indexes it; a new job is taken once that one has ended.
    const record = uploaded.data[0];
    await until(
      () => stack.request('GET', `/v4/data/documents/rag-index/${record.jobId}?tenant_id=${acme}`, { as: ADMIN }),
      (job) => ['completed', 'failed', 'cancelled'].includes(job.body.state),
      60_000,
    );
    const job = clean(await call('POST', '/data/documents/rag-index', { body: { tenant_id: acme, document_id: record.id } }), 202);
    clean(await call('GET', `/data/documents/rag-index/${job.jobId}?tenant_id=${acme}`), 200);
  });

  it("finds no violation in v3's requests: resources, users, documents, chat, executions", async () => {
    const v3 = { version: 'v3' as const };
    const project = clean(await call('POST', '/resources/project', { ...v3, body: { name: `Apollo ${run}`, status: 'active', budget: 10, metadata: { run } } }), 201);
    const item = `/resources/project/${project.id}`;
    clean(await call('GET', item, v3), 200);
    clean(await call('PUT', item, { ...v3, body: { name: `Apollo ${run}`, status: 'active', budget: 11 } }), 200);
    clean(await call('PATCH', item, { ...v3, body: { budget: 12 } }), 200);
    clean(await call('GET', `/resources?type=project&limit=5&filter[metadata.run]=${run}`, v3), 200);
    clean(await call('DELETE', item, v3), 204);

    const me = clean(await call('GET', '/users/me', v3), 200);
    clean(await call('GET', `/users/${me.id}`, v3), 200);
    clean(await call('GET', '/users?limit=5', v3), 200);

    const form = new FormData();
    form.append('file', new Blob(['Projects report monthly.'], { type: 'text/plain' }), 'report.txt');
    const document = clean(await call('POST', '/documents', { ...v3, form }), 201);
    clean(await call('GET', `/documents/${document.id}`, v3), 200);
    clean(await call('GET', `/documents/${document.id}/file`, v3), 200);
    clean(await call('GET', '/documents?limit=5', v3), 200);
    clean(await call('POST', '/documents/search', { ...v3, body: { query: 'report' } }), 200);
    clean(await call('GET', '/documents/search?query=report', v3), 200);
    const classified = await call('POST', `/documents/${document.id}/classify`, v3);
    clean(classified, classified.status === 202 ? 202 : 200);
    const indexed = await call('POST', `/documents/${document.id}/index`, { ...v3, body: {} });
    clean(indexed, indexed.status === 202 ? 202 : 200);
    clean(await call('DELETE', `/documents/${document.id}`, v3), 204);

    // A chat answer is a stream of server-sent events: its status and content type are checked, not its events.
    const chat = await call('POST', '/chat', { ...v3, body: { message: 'What projects are active?' } });
    clean(chat, 200);
    expect(chat.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await call('GET', `/chat/conversations/${chat.headers.get('x-conversation-id')}/messages/${chat.headers.get('x-message-id')}/events`, v3);
    clean(events, 200);
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const conversations = clean(await call('GET', '/chat/conversations', v3), 200);
    const conversation = conversations.data?.[0] ?? conversations[0];
    clean(await call('GET', `/chat/conversations/${conversation.id}`, v3), 200);
    clean(await call('DELETE', `/chat/conversations/${conversation.id}`, v3), 204);

    const started = await call('POST', '/orchestrate/workflows/project-briefing/execute', { ...v3, body: { input: { projectId: project.id }, async: true } });
    const execution = clean(started, started.status === 200 ? 200 : 202);
    clean(await call('GET', `/orchestrate/executions/${execution.executionId ?? execution.id}`, v3), 200);
    clean(await call('POST', `/orchestrate/executions/${execution.executionId ?? execution.id}/cancel`, v3), 204);
    clean(await call('GET', '/orchestrate/executions?limit=5', v3), 200);
    clean(await call('GET', '/orchestrate/workflows', v3), 200);
  });

  it("finds no violation in v4's other areas: geo, webhooks, chat per workflow and stage, workflow runtime, realtime, capabilities, identity", async () => {
    const as = { token: await stack.token(own.admin.email) };
    const tenant = own.id;
    clean(await call('GET', '/identity/me', as), 200);
    clean(await call('GET', '/identity/tenants', as), 200);
    clean(await call('GET', '/platform/capabilities/catalog', as), 200);
    clean(await call('POST', `/platform/capabilities/evaluate?tenant_id=${tenant}`, { ...as, body: { capabilities: ['geo', 'webhooks'] } }), 200);

    clean(await call('POST', '/geo/resolve-location', { ...as, body: { query: 'Paris', limit: 3 } }), 200);
    clean(await call('POST', '/geo/reverse', { ...as, body: { lat: 47.3769, lon: 8.5417, limit: 3 } }), 200);
    const datasets = `/geo/datasets/${tenant}`;
    clean(await call('POST', datasets, { ...as, body: { key: `places-${run}`, name: 'Places', description: 'Prism' } }), 201);
    const dataset = `${datasets}/places-${run}`;
    const point = (id: string, lon: number, lat: number) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties: { kind: 'cafe' } });
    clean(await call('POST', `${dataset}/features`, { ...as, body: { type: 'FeatureCollection', features: [point('a', 8.54, 47.37), point('b', 8.55, 47.38)] } }), 200);
    clean(await call('GET', `${dataset}/features?bbox=8,47,9,48`, as), 200);
    clean(await call('GET', dataset, as), 200);
    clean(await call('PATCH', dataset, { ...as, body: { name: 'Cafés' } }), 200);
    clean(await call('POST', `/geo/reports/${tenant}`, { ...as, body: { dataset: `places-${run}`, group_by: 'kind' } }), 200);
    clean(await call('GET', datasets, as), 200);
    clean(await call('DELETE', dataset, as), 204);

    const endpoints = `/webhooks/${tenant}/endpoints`;
    const endpoint = await call('POST', endpoints, { ...as, body: { source: `crm-${run}`, workflow_id: 'project-briefing' } });
    clean(endpoint, 201);
    clean(await call('GET', `${endpoints}/crm-${run}`, as), 200);
    clean(await call('PATCH', `${endpoints}/crm-${run}`, { ...as, body: { description: 'CRM events' } }), 200);
    clean(await call('GET', `${endpoints}/crm-${run}/deliveries`, as), 200);
    clean(await call('GET', `${endpoints}/crm-${run}/refusals`, as), 200);
    const { secret } = clean(await call('POST', `${endpoints}/crm-${run}/rotate-secret`, as), 200);
    // A delivery as an outside system sends it: no token, signed over its exact bytes.
    const payload = JSON.stringify({ invoice: `INV-${run}` });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `sha256=${webhookSignature(secret, timestamp, Buffer.from(payload))}`;
    const delivered = clean(
      await call('POST', `/webhooks/${tenant}/crm-${run}`, { token: null, raw: payload, headers: { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': signature, 'x-webhook-id': `evt-${run}` } }),
      202,
    );
    clean(await call('GET', `/webhooks/${tenant}/deliveries/${delivered.deliveryId}`, as), 200);
    clean(await call('POST', `/webhooks/${tenant}/deliveries/${delivered.deliveryId}/replay`, as), 201);
    clean(await call('DELETE', `${endpoints}/crm-${run}`, as), 204);

    // A workflow of two stages, answered by the local model.
    const configure = async (type: string, data: object) => clean(await call('POST', `/data/resources/${tenant}/${type}`, { ...as, body: { data } }), 201);
    await configure('shared-workflow-config', {
      workflowKey: 'helpdesk',
      status: 'active',
      stages: [{ id: 'triage', prompt: 'Triage the request of {{customer}}.' }, { id: 'chat' }],
      aiProfileKey: 'local-profile',
    });
    await configure('shared-ai-profile', { profileKey: 'local-profile', provider: 'local', maxTokens: 200 });
    await configure('shared-chatbot-config', { workflowKey: 'helpdesk', status: 'active', systemPrompt: 'You are the helpdesk.' });
    clean(await call('GET', `/workflows/runtime/helpdesk/status?tenant_id=${tenant}`, as), 200);
    const triage = clean(await call('POST', `/ai/chat/${tenant}/helpdesk/triage`, { ...as, body: { message: 'My printer is on fire', params: { customer: 'Ada' } } }), 200);
    clean(await call('POST', `/ai/chat/${tenant}/helpdesk/chat`, { ...as, body: { message: 'Is it out yet?', conversation_id: triage.conversation_id } }), 200);
    // A stream of server-sent events: its status and content type are checked, not its events.
    const stream = await call('POST', `/ai/chat/stream/${tenant}/helpdesk/chat`, { ...as, body: { message: 'How do I reset my password?' } });
    clean(stream, 200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);

    clean(await call('POST', `/realtime/negotiate?tenant_id=${tenant}`, { ...as, body: { channels: ['resources'] } }), 200);
    clean(await call('GET', `/realtime/alerts?tenant_id=${tenant}`, as), 200);
  });

  it("finds no violation in v4's platform requests: tenants, apps and their verticals, identity provider apps, users, plans and capability overrides", async () => {
    const as = { token: await stack.token(own.admin.email) };
    const member = { token: await stack.token(own.member.email) };
    const platform = { token: await stack.token(PLATFORM_ADMIN) };
    const tenants = `/platform/tenants/${own.id}`;

    const field = clean(await call('POST', `${tenants}/apps`, { ...as, body: { name: 'Field', key: `field-${run}`, child_tenant: { name: 'Field tenant', slug: `field-${run}` } } }), 201);
    clean(await call('POST', `${tenants}/apps`, { ...as, body: { name: 'Office', key: `office-${run}` } }), 201);
    // A new tenant is provisioned in the background: active once the caller's tenants say so.
    const active = (id: string) =>
      until(
        () => stack.request('GET', '/v4/identity/tenants', { as: own.admin.email }),
        (r) => r.body.data.some((t: any) => t.id === id && t.status === 'active'),
      );
    await active(field.childTenantId);
    clean(await call('GET', `/verticals/field-${run}`, as), 200);
    const office = `/verticals/office-${run}/resources/project`;
    const created = clean(await call('POST', office, { ...as, body: { data: { name: `Office ${run}`, status: 'open' } } }), 201);
    clean(await call('GET', `${office}/${created.id}`, as), 200);
    clean(await call('PUT', `${office}/${created.id}`, { ...as, body: { data: { name: `Office ${run}`, status: 'open' }, version: 1 } }), 200);
    clean(await call('PATCH', `${office}/${created.id}`, { ...as, body: { data: { status: 'done' } } }), 200);
    clean(await call('GET', `${office}?limit=5`, as), 200);
    clean(await call('DELETE', `${office}/${created.id}`, as), 204);

    const client = clean(
      await call('POST', `/platform/provisioning/idp-apps?tenant_id=${own.id}`, { ...as, body: { app_key: `office-${run}`, display_name: 'Office', redirect_uris: ['https://office.example.test/callback'] } }),
      201,
    );
    clean(await call('POST', `/platform/provisioning/idp-apps/${encodeURIComponent(client.clientId)}/rotate-secret`, { ...as, body: { revoke_previous: true } }), 200);

    const child = clean(await call('POST', `${tenants}/children`, { ...as, body: { name: 'Branch', slug: `branch-${run}` } }), 201);
    const childId = child.id as string;
    clean(await call('POST', `${tenants}/children/${childId}/bootstrap-admin`, as), 201);
    await active(childId);
    const me = clean(await call('GET', '/identity/me', member), 200);
    clean(await call('GET', `/platform/users/by-email?email=${encodeURIComponent(own.member.email)}`, as), 200);
    clean(await call('GET', `/platform/users/${me.id}/memberships`, as), 200);
    clean(await call('POST', `/platform/tenants/${childId}/users/${me.id}/provision`, as), 201);
    clean(await call('POST', '/identity/me/decline', { ...member, body: { tenant_id: childId } }), 204);
    clean(await call('POST', `/platform/tenants/${field.childTenantId}/users/${me.id}/provision`, as), 201);
    clean(await call('POST', '/identity/me/provision', { ...member, body: { tenant_id: field.childTenantId } }), 201);
    clean(await call('DELETE', `/platform/tenants/${field.childTenantId}/users/${me.id}`, as), 204);
    clean(await call('PATCH', '/identity/me/profile', { ...member, body: { name: 'Prism Member' } }), 200);
    clean(await call('POST', `/platform/tenants/${childId}/delete`, as), 204);

    clean(await call('POST', '/platform/tenants', { ...platform, body: { name: `Root ${run}`, slug: `root-${run}`, home_region: 'eu' } }), 201);
    clean(await call('PUT', `/platform/capabilities/overrides/${own.id}/geo`, { ...platform, body: { allowed: true, reason: 'contract test' } }), 200);
    clean(await call('DELETE', `/platform/capabilities/overrides/${own.id}/geo`, platform), 204);
    clean(await call('PUT', `${tenants}/plan`, { ...platform, body: { plan: 'enterprise' } }), 200);
    clean(await call('POST', '/platform/realtime/signing-keys/rotate', { ...platform, body: {} }), 201);
  });

  /** A route's sample as a request: JSON, a form with a small text file, or bytes, as its declaration takes it. */
  function sampleRequest(call: RouteCall, route: Route): { body?: unknown; form?: FormData; bytes?: string } {
    const body = route.input.body;
    if (!body) return {};
    if ('binary' in body) return { bytes: 'route case' };
    if ('multipart' in body) {
      const form = new FormData();
      for (const [name, value] of Object.entries((call.case.body ?? {}) as Record<string, unknown>)) form.append(name, String(value));
      if (call.case.tenantFrom === 'query' && call.tenant) form.append('tenant_id', call.tenant);
      for (const name of Object.keys(body.files)) form.append(name, new Blob(['Route case.'], { type: 'text/plain' }), 'case.txt');
      return { form };
    }
    return { body: call.case.body ?? {} };
  }

  it("sends every declared route's sample through Prism: answers always match the documents, and what Prism refuses the platform refuses too", async () => {
    const ownToken = await stack.token(own.admin.email);
    const routes = new Map(Object.values(API_ROUTES).flatMap(({ base, routes }) => routes.map((route): [string, Route] => [routeKey(base, route), route])));
    const disagreements: string[] = [];
    // The tenant's own deletion goes last: every other sample needs the tenant.
    const deletesTenant = (c: RouteCall) => c.route === 'POST /v4/platform/tenants/:tenantId/delete';
    const calls = routeCalls({ tenantId: own.id }).sort((a, b) => Number(deletesTenant(a)) - Number(deletesTenant(b)));
    expect(calls.at(-1)!.route).toBe('POST /v4/platform/tenants/:tenantId/delete');
    for (const routeCall of calls) {
      const version = routeCall.template.startsWith(V3) ? 'v3' : 'v4';
      const path = withQuery(routeCall).slice(version === 'v3' ? V3.length : '/v4'.length);
      const answer = await call(routeCall.method, path, { ...sampleRequest(routeCall, routes.get(routeCall.route)!), version, token: ownToken, sample: true });
      const violations: Violation[] = answer.violations ? JSON.parse(answer.violations) : [];
      const request = violations.filter((v) => v.location[0] === 'request');
      const response = violations.filter((v) => v.location[0] !== 'request');
      const what = `${routeCall.route} -> ${answer.status}`;
      if (answer.status >= 500) disagreements.push(`${what}: ${JSON.stringify(answer.body)}`);
      if (response.length) disagreements.push(`${what}: answer breaks the document: ${JSON.stringify(response)}`);
      if (request.length && answer.status < 400) disagreements.push(`${what}: accepted a request the document refuses: ${JSON.stringify(request)}`);
    }
    expect(disagreements).toEqual([]);
  }, 120_000);

  it('did see every answer through Prism', () => {
    expect(seen.length).toBeGreaterThan(15);
    expect(seen.filter((s) => s.violations)).toEqual([]);
  });
});
