import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDatabase, dropDatabase, ensureLocalPostgres, type LocalPostgres } from './postgres.ts';

const CHECK = { name: 'pg-harness-check', port: 24349 } as const;

async function query<T extends object>(url: string, run: (sql: postgres.Sql) => Promise<T[]>): Promise<T[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await run(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe('test database', () => {
  it('is a fresh svc_test_ database that answers queries', async () => {
    const rows = await query(inject('databaseUrl'), (sql) => sql<{ db: string; one: number }[]>`select current_database() as db, 1 as one`);
    expect(rows[0]?.db).toMatch(/^svc_test_\d+_[0-9a-f]+$/);
    expect(rows[0]?.one).toBe(1);
  });

  it('createDatabase replaces an existing database and dropDatabase removes it', async () => {
    const url = inject('databaseUrl');
    const name = `svc_check_${process.pid}`;
    const created = await createDatabase(url, name);
    expect(new URL(created).pathname).toBe(`/${name}`);
    await query(created, (sql) => sql`create table marker (id int)`);

    const recreated = await createDatabase(url, name);
    const tables = await query(recreated, (sql) => sql`select 1 from pg_tables where tablename = 'marker'`);
    expect(tables).toHaveLength(0);

    await dropDatabase(url, name);
    await dropDatabase(url, name);
    const left = await query(url, (sql) => sql`select 1 from pg_database where datname = ${name}`);
    expect(left).toHaveLength(0);
  });

  it('rejects database names that need quoting', async () => {
    await expect(createDatabase(inject('databaseUrl'), 'Bad; drop')).rejects.toThrow(/Invalid database name/);
  });
});

describe('ensureLocalPostgres', () => {
  let cluster: LocalPostgres | undefined;
  let blocker: Server | undefined;

  afterAll(async () => {
    await cluster?.stop();
    blocker?.close();
  });

  it('fails clearly when its port is held by another process', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    await expect(ensureLocalPostgres({ name: CHECK.name, port })).rejects.toThrow(`Port ${port} on 127.0.0.1 is in use`);
  });

  it('starts once, is reused by the next call, and stops', { timeout: 120_000 }, async () => {
    cluster = await ensureLocalPostgres(CHECK);
    const again = await ensureLocalPostgres(CHECK);
    expect(again.url).toBe(`postgres://postgres@127.0.0.1:${CHECK.port}/postgres`);
    expect(again.url).toBe(cluster.url);
    expect(again.dataDir).toBe(cluster.dataDir);

    const rows = await query(cluster.url, (sql) => sql<{ one: number; fsync: string; max: string }[]>`
      select 1 as one, current_setting('fsync') as fsync, current_setting('max_connections') as max`);
    expect(rows[0]).toEqual({ one: 1, fsync: 'on', max: '200' });

    await cluster.stop();
    await expect(query(cluster.url, (sql) => sql`select 1`)).rejects.toThrow();
  });

  it('after a crash, neither signals nor waits for a live process that took the pid in postmaster.pid', { timeout: 120_000 }, async () => {
    const stopped = await ensureLocalPostgres(CHECK);
    await stopped.stop();
    // This test's own process stands in for the unrelated one: a SIGINT sent to it would end the run.
    writeFileSync(join(stopped.dataDir, 'postmaster.pid'), `${process.pid}\n${stopped.dataDir}\n0\n${CHECK.port}\n`);
    cluster = await ensureLocalPostgres(CHECK);
    expect((await query(cluster.url, (sql) => sql<{ one: number }[]>`select 1 as one`))[0]).toEqual({ one: 1 });
    await cluster.stop();
  });
});
