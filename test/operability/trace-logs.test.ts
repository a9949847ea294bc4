import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessLogEntry } from '../../api-edge/observability.ts';
import type { ActivityLogEntry } from '../../workers/activity-trace.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * The log lines that let one request be followed across processes: the edge's access-log line
 * (request id, trace id, route template, status, duration, tenant and user), and a line per
 * activity that the request's workflows run, with the same request id and trace id, for queued
 * and local activities alike. The logs are the platform's own (`accessLog`, `activityLog`), as
 * production writes them as JSON lines.
 */
const PLATFORM_ADMIN = 'platform@svc.test';
const requests: AccessLogEntry[] = [];
const activities: ActivityLogEntry[] = [];
let stack: TestStack;

const newTrace = () => {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, requestId: `req-${randomUUID()}` };
};

beforeAll(async () => {
  stack = await startTestStack({ accessLog: (entry) => requests.push(entry), activityLog: (entry) => activities.push(entry) });
});
afterAll(() => stack?.close());

describe('the edge’s request log', () => {
  it('has one line per request with its request id, trace id, route template, status, duration, tenant and user', async () => {
    const trace = newTrace();
    const answer = await stack.request('GET', `${V3}/users/me`, { as: ADMIN, headers: { 'x-request-id': trace.requestId, traceparent: trace.traceparent } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toBe(trace.requestId);
    const lines = await until(async () => requests.filter((r) => r.requestId === trace.requestId), (found) => found.length > 0, 10_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ traceId: trace.traceId, method: 'GET', route: `${V3}/users/me`, status: 200 });
    // The tenant as the caller named it (here the token's slug) or its id.
    expect(['acme', answer.body.tenantId]).toContain(lines[0]!.tenant);
    expect(lines[0]!.user).toEqual(expect.any(String));
    expect(lines[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('names the route template, never the URL, and starts a trace for a request without one', async () => {
    const answer = await stack.request('GET', `${V3}/resources/project/${randomUUID()}?secret=1`, { as: ADMIN });
    expect(answer.status).toBe(404);
    const requestId = answer.headers.get('x-request-id')!;
    const [line] = await until(async () => requests.filter((r) => r.requestId === requestId), (found) => found.length > 0, 10_000);
    expect(line).toMatchObject({ method: 'GET', route: `${V3}/resources/:type/:id`, status: 404 });
    expect(line!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(line)).not.toContain('secret');

    const refused = await stack.request('GET', '/v4/identity/me', { headers: { 'x-request-id': `anon-${requestId}` } });
    expect(refused.status).toBe(401);
    const [anonymous] = await until(async () => requests.filter((r) => r.requestId === `anon-${requestId}`), (found) => found.length > 0, 10_000);
    expect(anonymous).toMatchObject({ route: '/v4/*', status: 401 });
    expect(anonymous).not.toHaveProperty('user');
  });
});

describe('activity log lines', () => {
  it('carry the request id and trace id of the request that started the run', { timeout: 60_000 }, async () => {
    const trace = newTrace();
    const executed = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, {
      as: ADMIN,
      headers: { 'x-request-id': trace.requestId, traceparent: trace.traceparent },
      body: { input: {}, async: false },
    });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    const lines = await until(async () => activities.filter((a) => a.requestId === trace.requestId), (found) => found.length > 0, 20_000);
    for (const line of lines) expect(line).toMatchObject({ traceId: trace.traceId, outcome: 'completed', workflowId: expect.stringContaining(executed.body.id) });
    expect(activities.filter((a) => a.traceId === trace.traceId).length).toBe(lines.length);
  });

  it('do so for local activities too (tenant provisioning)', { timeout: 90_000 }, async () => {
    const trace = newTrace();
    const slug = `traced-${randomBytes(4).toString('hex')}`;
    const created = await stack.request('POST', '/v4/platform/tenants', {
      as: PLATFORM_ADMIN,
      headers: { 'x-request-id': trace.requestId, traceparent: trace.traceparent },
      body: { name: 'Traced', slug, homeRegion: 'eu' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const lines = await until(async () => activities.filter((a) => a.requestId === trace.requestId), (found) => found.some((a) => a.activity === 'activateTenant'), 60_000);
    expect(lines.map((a) => a.activity)).toEqual(expect.arrayContaining(['ensureDefaultRoles', 'ensureExampleWorkflows', 'activateTenant']));
    for (const line of lines) expect(line).toMatchObject({ traceId: trace.traceId, workflowType: 'provisionTenant', workflowId: `tenant-${created.body.id}-provision` });
  });
});
