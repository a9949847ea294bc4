import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant, insertUser } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { createObjectTypesService } from '../object-types/object-types.service.ts';
import { resourceOps } from './resource-ops.ts';
import { CHANGED_SINCE_SQL } from './resources.repo.ts';
import { createResourcesService } from './resources.service.ts';

/** A list's total is remembered between requests, and stays exact: two processes, each remembering its own, see every change the other commits. */
describe('remembered list totals', () => {
  let db: Db;
  let actor: Actor;
  const suite = randomUUID();
  const objectTypes = () => createObjectTypesService({ db });
  // Two control-plane processes over one database: each remembers totals of its own.
  let first: ReturnType<typeof createResourcesService>;
  let second: ReturnType<typeof createResourcesService>;

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    first = createResourcesService({ db, objectTypes: objectTypes() });
    second = createResourcesService({ db, objectTypes: objectTypes() });
    const slug = `totals-${suite.slice(0, 8)}`;
    const tenantId = await insertActiveTenant(db.sql, slug);
    const userId = await insertUser(db.sql, `totals-${suite}`);
    actor = { userId, email: 'totals@example.test', tenantId, tenantSlug: slug, roles: ['admin'], permissions: new Set() };
  });
  afterAll(() => db?.close());

  const active = (service = first) => service.list(actor, { type: 'project', filter: {}, where: { status: 'active' }, limit: 2 }).then((page) => page.total);
  const create = (status: string, service = second) => service.create(actor, 'project', { name: `p-${status}`, status });

  it('counts again once another process’s create, update or delete of the type has committed', async () => {
    await create('active');
    await create('archived');
    expect(await active()).toBe(1);
    expect(await active()).toBe(1);
    const made = await create('active');
    expect(await active()).toBe(2);
    await second.update(actor, 'project', made.id, { status: 'archived' });
    expect(await active()).toBe(1);
    const other = await create('active');
    expect(await active()).toBe(2);
    await second.remove(actor, 'project', other.id);
    expect(await active()).toBe(1);
    // The other process's own remembered total follows the first's writes too.
    expect(await active(second)).toBe(1);
    await create('active', first);
    expect(await active(second)).toBe(2);
  });

  it('sees a change whose transaction was still open when the total was counted', async () => {
    // A list counted first while the insert's transaction is open.
    const named = (name: string) => first.list(actor, { type: 'project', filter: {}, where: { name }, limit: 2 }).then((page) => page.total);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const writing = new Promise<void>((resolve) => (written = resolve));
    const open = db.inTenant(actor.tenantId, async (tx) => {
      await resourceOps(tx, objectTypes().validate).insert(await objectTypes().requireWritable(tx, 'project'), { name: 'late', status: 'active' }, actor.userId);
      written();
      await held;
    });
    await writing;
    // A later transaction commits first: the open one is then among the snapshot's running transactions, not past its end.
    await create('archived');
    // Counted while the insert is not yet committed: not seen, and the total is remembered.
    expect(await named('late')).toBe(0);
    expect(await named('late')).toBe(0);
    release();
    await open;
    expect(await named('late')).toBe(1);
  });

  it('gives the remembered total while nothing of the type changed: a row written past the platform is not seen until its next change', async () => {
    const before = await active();
    // Written without the history that every change through the platform records.
    await db.sql`insert into resources (tenant_id, type, data, created_by, updated_by)
      values (${actor.tenantId}::uuid, 'project', '{"name":"bypass","status":"active"}', ${actor.userId}::uuid, ${actor.userId}::uuid)`;
    expect(await active()).toBe(before);
    // A list not counted before (another filter) counts it.
    const fresh = await first.list(actor, { type: 'project', filter: {}, where: { status: { in: ['active'] } }, limit: 2 });
    expect(fresh.total).toBe(before + 1);
    await create('archived');
    expect(await active()).toBe(before + 1);
  });

  it('asks the history for changes by its index, as the tenant, in the generic plan that a prepared statement settles on', async () => {
    const snapshot = (await db.sql<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`)[0]!.snapshot;
    // Many changes of another type since the snapshot: the question must still read only its own type's entries.
    await db.sql`insert into resource_versions (tenant_id, resource_id, type, version, operation, data, at)
      select ${actor.tenantId}::uuid, gen_random_uuid(), 'other-type', 1, 'create', '{}', now() from generate_series(1, 2000)`;
    await db.sql`analyze resource_versions`;
    const plan = await db.inTenant(actor.tenantId, async (tx) => {
      await tx.unsafe(`set local plan_cache_mode = force_generic_plan`);
      await tx.unsafe(`prepare changed_since(text[], text) as ${CHANGED_SINCE_SQL}`);
      const rows = await tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain execute changed_since('{project}', '${snapshot}')`);
      await tx.unsafe(`deallocate changed_since`);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    // An index scan, or a bitmap scan of the same index when the run's other files have filled the table: never a scan of the table.
    expect(plan).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) resource_versions_changes/);
    expect(plan).not.toMatch(/Seq Scan/);
    expect(plan).toMatch(/Index Cond: .*type = ANY .*xid >= /);
  });
});
