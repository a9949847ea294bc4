import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from './client.ts';
import { DEFAULT_DB_TIMEOUTS, isConnectionLost } from './faults.ts';

/**
 * Connections dropped by the server (`pg_terminate_backend`) again and again while tenant
 * transactions run: once the drops stop, every connection of the tenant pool serves again within a
 * bound, none lost to the pool for good (docs/decisions/0179-connections-stuck-after-a-drop.md).
 * Against the run's PostgreSQL; the connections of the client under test carry an application name
 * of their own, so that exactly they are dropped.
 */
describe('tenant transactions after dropped connections', () => {
  const application = `dropped-${randomBytes(4).toString('hex')}`;
  const named = (url: string) => {
    const withName = new URL(url);
    withName.searchParams.set('application_name', application);
    return withName.toString();
  };
  const tenant = randomUUID();
  /** The platform's default tenant pool. */
  const max = 20;
  const acquireMs = 1_000;
  let db: Db;
  let admin: postgres.Sql;

  beforeAll(() => {
    db = createDb(named(inject('databaseUrl')), { max, tenantDatabaseUrl: named(inject('tenantDatabaseUrl')), timeouts: { ...DEFAULT_DB_TIMEOUTS, acquireMs } });
    admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await db?.close();
    await admin?.end({ timeout: 5 });
  });

  /** Holds one tenant connection for `ms` and answers which backend served it. */
  const hold = (ms: number) =>
    db.inTenant(tenant, async (tx) => {
      const [row] = await tx<[{ pid: number }]>`select pg_backend_pid() as pid`;
      if (ms) await tx`select pg_sleep(${ms / 1000})`;
      return row.pid;
    });

  /**
   * As in a platform process (main.ts), until `restore`: postgres.js rejects statements nobody
   * waits for when it loses a connection being opened (its type lookup); only those are not the
   * test's failure.
   */
  const toleratingUnawaitedLosses = () => {
    const listeners = process.listeners('unhandledRejection');
    let count = 0;
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', (reason, promise) => {
      if (isConnectionLost(reason)) count++;
      else for (const listener of listeners) listener(reason, promise);
    });
    return {
      count: () => count,
      restore: () => {
        process.removeAllListeners('unhandledRejection');
        for (const listener of listeners) process.on('unhandledRejection', listener);
      },
    };
  };

  /**
   * Runs rounds of `max` transactions at once, each holding its connection a while, until one
   * round is served by `max` server processes (every connection of the pool) or `withinMs` passed.
   */
  const allServe = async (withinMs: number) => {
    const started = Date.now();
    let distinct = 0;
    let last = '';
    while (distinct < max && Date.now() - started < withinMs) {
      const round = await Promise.allSettled(Array.from({ length: max }, () => hold(300)));
      const served = round.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      distinct = new Set(served).size;
      last = `${distinct} distinct of ${served.length} served, ${round.length - served.length} refused, ${Date.now() - started} ms in`;
    }
    return { distinct, last };
  };

  it('serves with every connection of the pool within 3 s of the last drop', async () => {
    expect((await allServe(10_000)).distinct).toBe(max);

    const unawaited = toleratingUnawaitedLosses();
    try {
      let faulting = true;
      const outcomes = new Map<string, number>();
      const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
      // Twelve clients keep the pool busy with short transactions, each starting the next as soon
      // as the last one ended, failed or not.
      const clients = Array.from({ length: 12 }, async (_, c) => {
        while (faulting) {
          await hold(c % 3 === 0 ? 20 : 0).then(
            () => count('ok'),
            (error: { code?: string; name?: string }) => count(error.code ?? error.name ?? 'error'),
          );
        }
      });
      // For 10 s, every 30 ms on average, the server drops each connection of the client, those
      // being opened too.
      let dropped = 0;
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const ended = await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${application} and pid <> pg_backend_pid()`;
        dropped += ended.length;
        await sleep(Math.random() * 60);
      }
      faulting = false;
      await Promise.all(clients);
      const summary = `${dropped} connections dropped; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; ${unawaited.count()} unawaited statements failed`;
      expect(dropped, summary).toBeGreaterThan(100);

      // Within 3 s of the last drop, the pool's every connection serves at once.
      const { distinct, last } = await allServe(3_000);
      process.stderr.write(`[dropped-connections] ${summary}; ${last}\n`);
      expect(distinct, `${summary}; ${last}`).toBe(max);
    } finally {
      unawaited.restore();
    }
  }, 60_000);

  it('serves with every connection within 3 s of each drop of them all while half of them are in transactions that retry at once', async () => {
    // The shape that left connections stuck: a transaction fails as its connection closes and its
    // retry takes an idle connection the server has just closed too, before the pool noticed.
    const unawaited = toleratingUnawaitedLosses();
    try {
      expect((await allServe(10_000)).distinct).toBe(max);
      for (let round = 1; round <= 10; round++) {
        const busy = Array.from({ length: max / 2 }, () =>
          db
            .inTenant(tenant, async (tx) => {
              await tx`select 1`;
              await sleep(2_000);
            })
            .catch(() => Promise.allSettled([hold(0), hold(0)])),
        );
        await sleep(50);
        await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${application} and pid <> pg_backend_pid()`;
        await Promise.all(busy);
        const { distinct, last } = await allServe(3_000);
        expect(distinct, `round ${round}: ${last}`).toBe(max);
      }
    } finally {
      unawaited.restore();
    }
  }, 120_000);
});
