import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createPool } from './client.ts';
import { ANSWER_MARGIN_MS, DEFAULT_DB_TIMEOUTS } from './faults.ts';

/**
 * A connection is cut only when it sent something and heard nothing past the statement timeout
 * plus a margin (db/faults.ts): against the run's PostgreSQL, an idle connection and a listening
 * one outlive that deadline, and a slow statement is cancelled by the server, not cut.
 */
describe('connections cut when unanswered', () => {
  const statementMs = 300;
  const timeouts = { ...DEFAULT_DB_TIMEOUTS, statementMs };
  const sql = createPool(inject('databaseUrl'), { max: 1, timeouts });
  const notifier = createPool(inject('databaseUrl'), { max: 1, timeouts });
  afterAll(async () => {
    await Promise.all([sql.end({ timeout: 5 }), notifier.end({ timeout: 5 })]);
  });

  it('keeps an idle connection and a listening one past the deadline', async () => {
    const [before] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const heard: string[] = [];
    const channel = `unanswered_${process.pid}`;
    await sql.listen(channel, (payload) => heard.push(payload));
    await sleep(statementMs + ANSWER_MARGIN_MS + 1_000);
    await notifier`select pg_notify(${channel}, 'still here')`;
    const [after] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    expect(after!.pid).toBe(before!.pid);
    await until(() => heard.length > 0);
    expect(heard).toEqual(['still here']);
  }, 30_000);

  it('lets the server cancel a slow statement: 57014, not a cut connection', async () => {
    const error = await sql`select pg_sleep(5)`.then(() => undefined, (e: unknown) => e as { code?: string });
    expect(error?.code).toBe('57014');
    expect((await sql<{ one: number }[]>`select 1 as one`)[0]!.one).toBe(1);
  }, 30_000);
});

async function until(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(50);
}
