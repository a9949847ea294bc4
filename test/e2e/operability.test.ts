import { createHash, randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

/**
 * What operators rely on at the edge: security headers and a request id on every answer, metrics
 * at /metrics by route template, and the request's trace carried into the workflows it starts.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const API_CSP = "default-src 'none'; frame-ancestors 'none'";

function expectSecurityHeaders(headers: Headers, csp: string | RegExp = API_CSP) {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('content-security-policy')).toMatch(csp);
  expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(headers.get('x-request-id')).toBeTruthy();
}

/** The dev identity provider's sign-in page for a PKCE authorization request: an HTML page. */
async function signInPage(): Promise<Response> {
  const authorize = new URL(`${stack.url}/oauth2/v2.0/authorize`);
  authorize.search = new URLSearchParams({
    client_id: 'svc-cli',
    response_type: 'code',
    scope: 'openid',
    redirect_uri: 'http://127.0.0.1:50000/callback',
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const redirect = await fetch(authorize, { redirect: 'manual' });
  expect(redirect.status).toBeGreaterThanOrEqual(300);
  expectSecurityHeaders(redirect.headers, /.+/);
  const cookie = redirect.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  return fetch(new URL(redirect.headers.get('location')!, stack.url), { headers: { cookie }, redirect: 'manual' });
}

describe('security headers and request ids', () => {
  it('are on a v3 route, a v4 route, errors, /health and /metrics', async () => {
    const answers = await Promise.all([
      stack.request('GET', `${V3}/users/me`, { as: ADMIN }),
      stack.request('GET', '/v4/identity/me', { as: ADMIN }),
      stack.request('GET', '/v4/no-such-route', { as: ADMIN }),
      stack.request('GET', '/no-such-route'),
      stack.request('GET', `${V3}/users/me`),
      stack.request('GET', '/health'),
      stack.request('GET', '/metrics'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 404, 401, 200, 200]);
    for (const { headers } of answers) expectSecurityHeaders(headers);
    expect(new Set(answers.map((a) => a.headers.get('x-request-id'))).size).toBe(answers.length);
  });

  it('gives the identity provider’s HTML pages a policy that forbids framing and allows their inline styles', async () => {
    const page = await signInPage();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expectSecurityHeaders(page.headers, /^default-src 'none'; style-src 'unsafe-inline'/);
    expect(await page.text()).toContain('<form');
  });

  it('echoes a valid X-Request-Id and replaces one that is too long or not printable', async () => {
    const kept = await stack.request('GET', `${V3}/users/me`, { as: ADMIN, headers: { 'x-request-id': 'client-chosen id/1' } });
    expect(kept.headers.get('x-request-id')).toBe('client-chosen id/1');
    const refused = await stack.request('GET', '/no-such-route', { headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('metrics', () => {
  it('counts requests by route template, never the raw URL, without authentication', async () => {
    await stack.request('GET', '/v4/identity/me', { as: ADMIN });
    const me = await stack.request('GET', `${V3}/users/me`, { as: ADMIN });
    expect((await stack.request('GET', `${V3}/users/${me.body.id}`, { as: ADMIN })).status).toBe(200);
    const metrics = await fetch(`${stack.url}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="\/v4\/identity\/me",status="200"\} \d+/);
    expect(text).toMatch(/svc_http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/api\/svc\/v3\/users\/:id",status="200"\}/);
    expect(text).not.toContain(me.body.id);
    expect(text).toContain('svc_rate_limit_refusals_total');
    // The control plane records its procedures in its own process (http-link: another registry).
    if (inject('controlPlaneMode') !== 'http') expect(text).toMatch(/svc_trpc_procedure_duration_seconds_count\{procedure="users\.get",outcome="ok"\} \d+/);
  });
});

describe('trace context', () => {
  it('carries the traceparent and request id of an execute into the workflow run it starts', async () => {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const requestId = `trace-test-${randomBytes(4).toString('hex')}`;
    const started = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, {
      as: ADMIN,
      body: { input: {}, async: true },
      headers: { traceparent, 'x-request-id': requestId },
    });
    expect(started.status).toBe(202);
    expect(started.headers.get('x-request-id')).toBe(requestId);
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({ connection, namespace: inject('temporalNamespace') });
      const description = await client.workflow.getHandle(`exec-${started.body.id}`).describe();
      expect(description.memo).toEqual({ requestId, traceparent });
    } finally {
      await connection.close();
    }
  });
});
