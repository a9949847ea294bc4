import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

describe('rate limits', () => {
  const keyPrefix = `shared-${randomUUID()}`;
  const policies = { resources: { points: 6, durationSeconds: 60 }, anonymous: { points: 2, durationSeconds: 60 } };
  let first: TestStack;
  let second: TestStack;

  beforeAll(async () => {
    first = await startTestStack({ rateLimits: { keyPrefix, policies } });
    second = await startTestStack({ rateLimits: { keyPrefix, policies } });
    await first.token(ADMIN);
    await second.token(ADMIN);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it('counts per tenant across every edge instance, then answers 429 with retryAfter', async () => {
    const remaining: number[] = [];
    for (const stack of [first, second, first, second, first, second]) {
      const response = await stack.request('GET', `${V3}/resources?type=project&limit=1`, { as: ADMIN });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('6');
      remaining.push(Number(response.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([5, 4, 3, 2, 1, 0]);

    const limited = await second.request('GET', `${V3}/resources?type=project&limit=1`, { as: ADMIN });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(limited.body.error.retryAfter).toBeGreaterThan(0);
    expect(limited.body.error.retryAfter).toBeLessThanOrEqual(60);
    expect(Number(limited.headers.get('retry-after'))).toBe(limited.body.error.retryAfter);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
  });

  it('limits requests without valid credentials per client, with the same headers on the 401s and the 429', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await first.request('GET', `${V3}/resources?type=project`, { headers: { authorization: 'Bearer not-a-token' } }));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 429]);
    expect(answers.map((a) => a.body.error.code)).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'RATE_LIMIT_EXCEEDED']);
    for (const answer of answers) {
      expect(answer.headers.get('x-ratelimit-limit')).toBe('2');
      expect(answer.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    }
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['1', '0', '0']);
  });

  it('limits sign-in per client too, and behind a trusted proxy counts each client X-Forwarded-For names', async () => {
    // The test's requests come from 127.0.0.1, trusted here as the proxy in front of the edge.
    const proxied = await startTestStack({ rateLimits: { keyPrefix: `proxied-${randomUUID()}`, policies }, trustedProxies: ['127.0.0.1', '::1'] });
    try {
      const from = (client: string) => ({ 'x-forwarded-for': `${client}, 127.0.0.1` });
      const signIns = [];
      for (let i = 0; i < 3; i++) signIns.push((await fetch(`${proxied.url}/auth/login`, { redirect: 'manual', headers: from('203.0.113.1') })).status);
      expect(signIns).toEqual([302, 302, 429]);
      // Another client behind the same proxy has a budget of its own, on the API as at sign-in.
      const other = await proxied.request('GET', `${V3}/resources?type=project`, { headers: { ...from('203.0.113.2'), authorization: 'Bearer not-a-token' } });
      expect(other.status).toBe(401);
      expect(other.headers.get('x-ratelimit-remaining')).toBe('1');
      // Addresses the client writes itself, further left, change nothing.
      const spoofed = await fetch(`${proxied.url}/auth/login`, { redirect: 'manual', headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.1' } });
      expect(spoofed.status).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  it('answers a burst of concurrent requests to two edge instances as if each had been counted alone', async () => {
    const burst = { keyPrefix: `burst-${randomUUID()}`, policies: { resources: { points: 10, durationSeconds: 60 } } };
    const stacks = [await startTestStack({ rateLimits: burst }), await startTestStack({ rateLimits: burst })];
    try {
      await Promise.all(stacks.map((stack) => stack.token(ADMIN)));
      const responses = await Promise.all(
        Array.from({ length: 16 }, (_, i) => stacks[i % 2]!.request('GET', `${V3}/resources?type=project&limit=1`, { as: ADMIN })),
      );
      const allowed = responses.filter((r) => r.status === 200);
      expect(allowed).toHaveLength(10);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(6);
      const remaining = allowed.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
      expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await Promise.all(stacks.map((stack) => stack.close()));
    }
  });

  it('does not spend other tenants’ or other APIs’ budgets', async () => {
    const globex = await first.request('GET', `${V3}/resources?type=project&limit=1`, { as: GLOBEX_ADMIN });
    expect(globex.status).toBe(200);
    const users = await first.request('GET', `${V3}/users/me`, { as: ADMIN });
    expect(users.status).toBe(200);
  });
});
