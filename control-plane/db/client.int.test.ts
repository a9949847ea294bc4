import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { APP_ROLE, cancellingOnAbort, createDb, type Db, type Tx } from './client.ts';
import { mayCancelStatementsOf, tenantLogin } from '../storage/storage.repo.ts';

/** The tenant scoping of the database client, against the run's PostgreSQL. */
describe('db client tenant scoping', () => {
  let db: Db;
  const probe = `lane_probe_${randomUUID().replaceAll('-', '')}`;
  /** Rows each tenant writes through the write lane, under row-level security. */
  const written = `lane_written_${randomUUID().replaceAll('-', '')}`;
  const tenants = [randomUUID(), randomUUID()] as const;

  beforeAll(async () => {
    // One shared read connection and one shared write connection, so that every read below is
    // pipelined on the same one, and every write likewise.
    db = createDb(inject('databaseUrl'), { readConnections: 1, writeConnections: 1 });
    await db.sql.unsafe(`create table ${probe} (a int)`);
    await db.sql.unsafe(`insert into ${probe} values (1)`);
    await db.sql.unsafe(`grant select on ${probe} to ${APP_ROLE}`);
    await db.sql.unsafe(`create table ${written} (tenant uuid not null, n int not null)`);
    await db.sql.unsafe(`alter table ${written} enable row level security`);
    await db.sql.unsafe(`alter table ${written} force row level security`);
    await db.sql.unsafe(`create policy own on ${written} using (tenant = current_tenant_id()) with check (tenant = current_tenant_id())`);
    await db.sql.unsafe(`grant select, insert on ${written} to ${APP_ROLE}`);
  });
  afterAll(async () => {
    await db?.sql.unsafe(`drop table if exists ${probe}`);
    await db?.sql.unsafe(`drop table if exists ${written}`);
    await db?.close();
  });

  const whoAmI = `select current_user::text as "user", current_setting('svc.tenant_id', true) as tenant, current_setting('transaction_read_only') as "readOnly"`;
  type WhoAmI = { user: string; tenant: string; readOnly: string }[];

  it('runs tenant transactions as svc_app with the tenant set', async () => {
    const [inTenant] = await db.inTenant(tenants[0], (tx) => tx.unsafe<WhoAmI>(whoAmI));
    expect(inTenant).toEqual({ user: APP_ROLE, tenant: tenants[0], readOnly: 'off' });
    const [read] = await db.readInTenant(tenants[1], (tx) => tx.unsafe<WhoAmI>(whoAmI));
    expect(read).toEqual({ user: APP_ROLE, tenant: tenants[1], readOnly: 'on' });
  });

  it('keeps the reads of different tenants apart when they share a connection', async () => {
    const reads = Array.from({ length: 300 }, (_, i) => {
      const tenant = tenants[i % 2]!;
      return db.readInTenant(tenant, (tx) => tx.unsafe<WhoAmI>(whoAmI, [], { prepare: true })).then(([row]) => ({ tenant, seen: row!.tenant }));
    });
    for (const { tenant, seen } of await Promise.all(reads)) expect(seen).toBe(tenant);
  });

  it('fails a read alone, and the next read on the connection has only its own tenant', async () => {
    const failing = db.readInTenant(tenants[0], (tx) => tx.unsafe('select 1 / (a - 1) from ' + probe + ' where a = $1', [1], { prepare: true }));
    const next = db.readInTenant(tenants[1], (tx) => tx.unsafe<WhoAmI>(whoAmI));
    await expect(failing).rejects.toThrow(/division by zero/);
    expect((await next)[0]!.tenant).toBe(tenants[1]);
  });

  it('cannot write in a read', async () => {
    await expect(db.readInTenant(tenants[0], (tx) => tx.unsafe(`insert into ${probe} values ($1)`, [2], { prepare: true }))).rejects.toThrow(
      /read-only transaction/,
    );
  });

  it('rejects the answer of a read that the driver re-sent after its transaction ended', async () => {
    const read = () => db.readInTenant(tenants[0], (tx) => tx.unsafe(`select *, $1::int as x from ${probe}`, [1], { prepare: true }));
    expect(await read()).toHaveLength(1);
    expect(await read()).toHaveLength(1);
    // The prepared statement's result type changes: postgres.js prepares it again and re-sends it
    // behind the COMMIT already queued, where it would run outside the tenant's transaction.
    await db.sql.unsafe(`alter table ${probe} add column b int`);
    await expect(read()).rejects.toThrow(/re-sent outside its transaction/);
    expect(await read()).toHaveLength(1);
  });

  it('runs a shared write in a transaction of its own, as svc_app with the tenant set, and commits it', async () => {
    const [write] = await db.writeInTenant(tenants[0], (tx) => tx.unsafe<WhoAmI>(whoAmI));
    expect(write).toEqual({ user: APP_ROLE, tenant: tenants[0], readOnly: 'off' });
    const [row] = await db.writeInTenant(tenants[1], (tx) => tx.unsafe<{ n: number }[]>(`insert into ${written} values (current_tenant_id(), $1) returning n`, [7], { prepare: true }));
    expect(row).toEqual({ n: 7 });
    // Committed by the time the write answers: another connection sees it.
    expect(await db.sql.unsafe(`select tenant::text as tenant, n from ${written} where n = 7`)).toEqual([{ tenant: tenants[1], n: 7 }]);
  });

  it("keeps the writes of different tenants apart when they share a connection, and refuses one naming another tenant's rows", async () => {
    const insert = (tenant: string, owner: string, n: number) =>
      db.writeInTenant(tenant, (tx) => tx.unsafe<{ tenant: string }[]>(`insert into ${written} values ($1::uuid, $2) returning current_tenant_id()::text as tenant`, [owner, n], { prepare: true }));
    const writes = Array.from({ length: 200 }, (_, i) => {
      const tenant = tenants[i % 2]!;
      return insert(tenant, tenant, 1000 + i).then(([row]) => ({ tenant, seen: row!.tenant }));
    });
    // Between them, a write for the first tenant that names the second's rows.
    const forged = insert(tenants[0], tenants[1], 5000);
    for (const { tenant, seen } of await Promise.all(writes)) expect(seen).toBe(tenant);
    await expect(forged).rejects.toThrow(/row-level security/);
    const counts = await db.sql.unsafe<{ tenant: string; count: number }[]>(`select tenant::text as tenant, count(*)::int as count from ${written} where n >= 1000 group by tenant order by tenant`);
    expect(counts).toEqual([...tenants].sort().map((tenant) => ({ tenant, count: 100 })));
  });

  it('rolls a failed write back alone: the writes queued behind it on the connection commit', async () => {
    // The insert fails after its first row: the statement, and so its transaction, writes nothing.
    const failing = db.writeInTenant(tenants[0], (tx) =>
      tx.unsafe(`insert into ${written} select current_tenant_id(), 1 / (3 - g) from generate_series(2, 3) g`, [], { prepare: true }),
    );
    const next = db.writeInTenant(tenants[0], (tx) => tx.unsafe(`insert into ${written} values (current_tenant_id(), $1)`, [9000], { prepare: true }));
    await expect(failing).rejects.toThrow(/division by zero/);
    await next;
    const rows = await db.sql.unsafe<{ n: number }[]>(`select n from ${written} where tenant = $1::uuid and (n = 1 or n = 9000)`, [tenants[0]]);
    expect(rows).toEqual([{ n: 9000 }]);
  });

  it('keeps tenant connections that log in as the tenant login inside row-level security, whatever role a statement sets', async () => {
    const guarded = `lane_guarded_${randomUUID().replaceAll('-', '')}`;
    await db.sql.unsafe(`create table ${guarded} (tenant uuid not null)`);
    await db.sql.unsafe(`alter table ${guarded} enable row level security`);
    await db.sql.unsafe(`create policy own on ${guarded} using (tenant = current_tenant_id())`);
    await db.sql.unsafe(`grant select on ${guarded} to ${APP_ROLE}`);
    await db.sql.unsafe(`insert into ${guarded} values ('${tenants[0]}'), ('${tenants[1]}')`);
    const [{ owner }] = await db.sql<[{ owner: string }]>`select tableowner as owner from pg_tables where tablename = ${guarded}`;
    const login = createDb(inject('databaseUrl'), { max: 1, readConnections: 1, tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    try {
      const role = await login.inTenant(tenants[0], async (tx) => (await tenantLogin(tx)).role);
      if (inject('tenantDatabaseUrl') === inject('databaseUrl')) {
        // A run on a given DATABASE_URL without TENANT_DATABASE_URL: the owner's login, which the doctor warns about.
        expect(await login.inTenant(tenants[0], (tx) => tenantLogin(tx))).toEqual({ role: owner, canLeaveRls: true });
        return;
      }
      expect(role).toBe(decodeURIComponent(new URL(inject('tenantDatabaseUrl')).username));
      const seen = (tx: Tx) => tx<{ tenant: string; user: string; session: string }[]>`
        select tenant::text as tenant, current_user::text as "user", session_user::text as session from ${tx(guarded)}`;
      expect(await login.readInTenant(tenants[0], (tx) => seen(tx))).toEqual([{ tenant: tenants[0], user: APP_ROLE, session: role }]);
      // Back to the login role: still not the owner, so the policy still applies.
      const reset = await login.inTenant(tenants[0], async (tx) => (await tx.unsafe('set local role none'), seen(tx)));
      expect(reset).toEqual([{ tenant: tenants[0], user: role, session: role }]);
      await expect(login.inTenant(tenants[0], (tx) => tx.unsafe(`set local role ${owner}`))).rejects.toThrow(/permission denied to set role/);
      const reauthorized = await login.inTenant(tenants[0], async (tx) => (await tx.unsafe('set local session authorization default'), seen(tx)));
      expect(reauthorized.map((row) => row.tenant)).toEqual([tenants[0]]);
      expect(reauthorized[0]!.session).toBe(role);

      // What the storage doctor reports: this login cannot leave row-level security, the owner's own login could,
      // and the owner may cancel this login's statements.
      expect(await login.inTenant(tenants[0], (tx) => tenantLogin(tx))).toEqual({ role, canLeaveRls: false });
      expect((await db.inTenant(tenants[0], (tx) => tenantLogin(tx))).canLeaveRls).toBe(true);
      expect(await db.system((tx) => mayCancelStatementsOf(tx, role))).toBe(true);
    } finally {
      await login.close();
      await db.sql.unsafe(`drop table if exists ${guarded}`);
    }
  });

  it("lets tenant transactions write their own object types only, never a built-in or another tenant's", async () => {
    const [{ count }] = await db.readInTenant(tenants[0], (tx) => tx<[{ count: number }]>`select count(*)::int as count from object_types where key = 'project'`);
    expect(count).toBe(1);
    await expect(
      db.inTenant(tenants[0], (tx) => tx`insert into object_types (tenant_id, key, name, schema) values (${tenants[1]}, 'forged', 'Forged', '{}')`),
    ).rejects.toThrow(/row-level security/);
    const builtInVersion = async () =>
      (await db.sql<[{ version: number }]>`select version from object_types where key = 'project' and tenant_id is null`)[0].version;
    const before = await builtInVersion();
    const builtIn = await db.inTenant(tenants[0], (tx) => tx`update object_types set version = version + 1 where key = 'project' returning id`);
    expect(builtIn).toHaveLength(0);
    expect(await builtInVersion()).toBe(before);
    const key = `own-${tenants[0].slice(0, 8)}`;
    await db.sql`insert into tenants (id, slug, name) values (${tenants[0]}::uuid, ${key}, ${key})`;
    try {
      const own = await db.inTenant(tenants[0], (tx) => tx`insert into object_types (tenant_id, key, name, schema) values (${tenants[0]}, ${key}, ${key}, '{}') returning id`);
      expect(own).toHaveLength(1);
      expect(await db.inTenant(tenants[1], (tx) => tx`update object_types set version = 9 where key = ${key} returning id`)).toHaveLength(0);
      await expect(db.inTenant(tenants[0], (tx) => tx`delete from object_types where key = ${key}`)).rejects.toThrow(/permission denied/);
    } finally {
      await db.sql`delete from object_types where key = ${key}`;
      await db.sql`delete from tenants where id = ${tenants[0]}::uuid`;
    }
  });

  it('cancels the statement running in a tenant transaction when the signal aborts, and only while it runs', async () => {
    // One tenant connection, of the tenant login: every transaction below runs on the same backend as the one aborted.
    const single = createDb(inject('databaseUrl'), { max: 1, tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const sleeping = single.inTenant(tenants[0], (tx) => cancellingOnAbort(single.sql, tx, controller.signal, () => tx`select pg_sleep(30)`));
      await expect(sleeping).rejects.toMatchObject({ code: '57014' });
      // The transaction rolled back and the connection went back to the pool in working order.
      const [after] = await single.inTenant(tenants[0], (tx) => tx.unsafe<WhoAmI>(whoAmI));
      expect(after).toMatchObject({ tenant: tenants[0] });

      // An abort after the work is done cancels nothing that runs later on the same connection.
      const late = new AbortController();
      const pid = await single.inTenant(tenants[0], (tx) =>
        cancellingOnAbort(single.sql, tx, late.signal, async () => (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid),
      );
      late.abort();
      const [later] = await single.inTenant(tenants[0], (tx) => tx<[{ slept: string; pid: number }]>`select pg_sleep(0.3)::text as slept, pg_backend_pid() as pid`);
      expect(later).toEqual({ slept: '', pid });

      // An aborted signal stops the work before it starts.
      await expect(single.inTenant(tenants[0], (tx) => cancellingOnAbort(single.sql, tx, controller.signal, () => tx`select 1`))).rejects.toMatchObject({
        name: 'AbortError',
      });
    } finally {
      await single.close();
    }
  });

  it("refuses a statement a transaction makes after its connection was lost, never sending it in the next transaction on that connection or on its closed socket", async () => {
    // One tenant connection: the transaction that waits for it gets the same one, opened again.
    const single = createDb(inject('databaseUrl'), { max: 1, tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    try {
      let lateStatement: Promise<unknown> | undefined;
      const killed = single.inTenant(tenants[0], async (tx) => {
        const [{ pid }] = await tx<[{ pid: number }]>`select pg_backend_pid() as pid`;
        await db.sql`select pg_terminate_backend(${pid})`;
        // Still at work when its transaction ended (as a request awaiting something else is).
        await new Promise((resolve) => setTimeout(resolve, 300));
        lateStatement = (async () => tx.unsafe<WhoAmI>(whoAmI))();
        return lateStatement;
      });
      await expect(killed).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      // The next transaction, on the connection opened again, runs while the late statement is made.
      const [next] = await single.inTenant(tenants[1], async (tx) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return tx.unsafe<WhoAmI>(whoAmI);
      });
      expect(next).toMatchObject({ tenant: tenants[1] });
      expect(lateStatement).toBeDefined();
      await expect(lateStatement).rejects.toMatchObject({ code: 'CONNECTION_CLOSED', message: expect.stringContaining('transaction already ended') });
    } finally {
      await single.close();
    }
  });

  it("refuses a statement an owner transaction makes after its connection was lost, never sending it in the next one on that connection", async () => {
    const single = createDb(inject('databaseUrl'), { systemMax: 1 });
    try {
      let lateStatement: Promise<unknown> | undefined;
      const killed = single.system(async (tx) => {
        const [{ pid }] = await tx<[{ pid: number }]>`select pg_backend_pid() as pid`;
        await db.sql`select pg_terminate_backend(${pid})`;
        await new Promise((resolve) => setTimeout(resolve, 300));
        lateStatement = (async () => tx`select txid_current_if_assigned() as txid`)();
        return lateStatement;
      });
      await expect(killed).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      const next = await single.system(async (tx) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return (await tx<[{ n: number }]>`select 1 as n`)[0].n;
      });
      expect(next).toBe(1);
      expect(lateStatement).toBeDefined();
      await expect(lateStatement).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    } finally {
      await single.close();
    }
  });
});
