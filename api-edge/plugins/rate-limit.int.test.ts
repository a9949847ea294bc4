import { randomUUID } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRateLimits, type RateLimitGroup, type RateLimitPolicy } from './rate-limit.ts';
import { postgresLimiters } from './rate-limit-postgres.ts';

/** The edge's rate limits with their counts in the run's PostgreSQL. */
describe('rate limit counts in PostgreSQL', () => {
  let sql: Sql;
  /** Statements the limiters sent, counted on their way to the real connection. */
  let sent = 0;
  let counting: Sql;

  beforeAll(() => {
    sql = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
    counting = new Proxy(sql, {
      get(target, property, receiver) {
        if (property !== 'unsafe') return Reflect.get(target, property, receiver);
        return (...args: Parameters<Sql['unsafe']>) => {
          sent++;
          return target.unsafe(...args);
        };
      },
    });
  });
  afterAll(async () => {
    await sql?.end();
  });

  const policies = (points: number): Record<RateLimitGroup, RateLimitPolicy> => ({
    resources: { points, durationSeconds: 60 },
    users: { points, durationSeconds: 60 },
    uploads: { points, durationSeconds: 60 },
    anonymous: { points, durationSeconds: 60 },
    webhooks: { points, durationSeconds: 60 },
  });
  const remainingOf = (outcome: PromiseSettledResult<{ 'x-ratelimit-remaining': string }>) =>
    outcome.status === 'fulfilled' ? outcome.value['x-ratelimit-remaining'] : `refused ${(outcome.reason as { headers: Record<string, string> }).headers['x-ratelimit-remaining']}`;

  it('counts the concurrent calls of two edge instances in one row, each exactly once', async () => {
    const keyPrefix = `count-${randomUUID()}`;
    const [one, two] = [createRateLimits(postgresLimiters(counting, { keyPrefix }), policies(8)), createRateLimits(postgresLimiters(counting, { keyPrefix }), policies(8))];
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two)('resources', 'tenant:acme')));
    const allowed = outcomes.filter((o) => o.status === 'fulfilled').map(remainingOf).sort();
    expect(allowed).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(outcomes.filter((o) => o.status === 'rejected').map(remainingOf)).toEqual(['refused 0', 'refused 0', 'refused 0', 'refused 0']);
    const [row] = await sql<{ points: number }[]>`select points from rate_limits where key = ${`${keyPrefix}:resources:tenant:acme`}`;
    expect(row!.points).toBe(12);
  });

  it('refuses a spent key in this process without asking PostgreSQL again, with the window’s reset', async () => {
    const limits = createRateLimits(postgresLimiters(counting, { keyPrefix: `spent-${randomUUID()}` }), policies(3));
    const first = await Promise.allSettled(Array.from({ length: 4 }, () => limits('resources', 'tenant:spent')));
    // The pool's two connections may write the four counts in either order: three pass, one is refused.
    expect(first.map((o) => o.status).sort()).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    sent = 0;
    const later = await Promise.allSettled(Array.from({ length: 3 }, () => limits('resources', 'tenant:spent')));
    expect(sent).toBe(0);
    for (const outcome of later) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as { code: string; headers: Record<string, string> };
      expect(reason.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(reason.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(reason.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    }
  });

  it('keeps counting in this process while its PostgreSQL client fails', async () => {
    const unreachable = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    await unreachable.end();
    const limits = createRateLimits(postgresLimiters(unreachable, { keyPrefix: `down-${randomUUID()}` }), policies(2));
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(...(await Promise.allSettled([limits('resources', 'tenant:acme')])));
    expect(outcomes.map(remainingOf)).toEqual(['1', '0', 'refused 0']);
  });
});
