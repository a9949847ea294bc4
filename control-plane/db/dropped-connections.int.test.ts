import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from './client.ts';
import { DEFAULT_DB_TIMEOUTS } from './faults.ts';

/**
 * Connections dropped by the server (`pg_terminate_backend`) again and again while tenant
 * transactions run: once the drops stop, every connection of the tenant pool serves again within a
 * bound, none lost to the pool for good. Against the run's PostgreSQL; the connections of the
 * client under test carry an application name of their own, so that exactly they are dropped.
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

  it('serves with every connection of the pool within 3 s of the last drop', async () => {
    expect(new Set(await Promise.all(Array.from({ length: max }, () => hold(200)))).size).toBe(max);

    let faulting = true;
    const outcomes = new Map<string, number>();
    const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
    // Twelve clients keep the pool busy with short transactions, each starting the next as soon as
    // the last one ended, failed or not.
    const clients = Array.from({ length: 12 }, async (_, c) => {
      while (faulting) {
        await hold(c % 3 === 0 ? 20 : 0).then(
          () => count('ok'),
          (error: { code?: string; name?: string }) => count(error.code ?? error.name ?? 'error'),
        );
      }
    });
    // For 10 s, every 30 ms on average, the server drops each connection of the client, those being
    // opened too.
    let dropped = 0;
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const ended = await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${application} and pid <> pg_backend_pid()`;
      dropped += ended.length;
      await sleep(Math.random() * 60);
    }
    faulting = false;
    await Promise.all(clients);
    const summary = `${dropped} connections dropped; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`;
    expect(dropped, summary).toBeGreaterThan(100);

    // Within 3 s of the last drop, the pool's every connection serves at once: `max` transactions
    // each holding one until all have theirs.
    const stopped = Date.now();
    let served: number[] | undefined;
    let lastError: unknown;
    while (!served && Date.now() - stopped < 3_000) {
      served = await Promise.all(Array.from({ length: max }, () => hold(300))).catch((error: unknown) => void (lastError = error));
    }
    expect(served, `${summary}; last refusal ${String(lastError)}`).toBeDefined();
    expect(new Set(served).size).toBe(max);
  }, 60_000);
});
