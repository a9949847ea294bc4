import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant, insertUser } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { createObjectTypesService } from '../object-types/object-types.service.ts';
import { createResourcesService } from '../resources/resources.service.ts';

/** A tenant's realtime event log keeps its last `retain` events, written by PostgreSQL as changes commit. */
describe("a tenant's realtime event log", () => {
  let db: Db;
  let actor: Actor;
  let resources: ReturnType<typeof createResourcesService>;
  const suite = randomUUID().slice(0, 8);

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    const objectTypes = createObjectTypesService({ db });
    resources = createResourcesService({ db, objectTypes });
    const slug = `log-${suite}`;
    const tenantId = await insertActiveTenant(db.sql, slug);
    const userId = await insertUser(db.sql, `log-${suite}`);
    actor = { userId, email: 'log@example.test', tenantId, tenantSlug: slug, roles: ['admin'], permissions: new Set() };
    await objectTypes.create(actor, { name: 'Tick', schema: { type: 'object' }, status: 'published', indexes: [], searchFields: [], actions: {}, fileProperties: {} });
    await db.sql`insert into realtime_streams (tenant_id, retain) values (${tenantId}::uuid, 200)`;
  });
  afterAll(() => db?.close());

  const log = async () => {
    const [row] = await db.sql<{ count: number; oldest: number; newest: number }[]>`
      select count(*)::int as count, min(seq)::int as oldest, max(seq)::int as newest from realtime_events where tenant_id = ${actor.tenantId}::uuid`;
    return row;
  };
  const record = async (changes: number) => {
    for (let n = 0; n < changes; n++) await resources.create(actor, 'tick', { n });
  };

  it('keeps the last `retain` events, one event leaving the window for each one recorded', async () => {
    await record(230);
    expect(await log()).toEqual({ count: 200, oldest: 31, newest: 230 });
    // An update and a delete are events too, and move the window the same way.
    const made = await resources.create(actor, 'tick', { n: 'x' });
    await resources.replaceAtVersion(actor, { type: 'tick', id: made.id, data: { n: 'y' }, version: 1 });
    await resources.remove(actor, 'tick', made.id);
    expect(await log()).toEqual({ count: 200, oldest: 34, newest: 233 });
  });

  it('drops what falls outside a lowered retention at once, and keeps more after a raised one', async () => {
    await db.sql`update realtime_streams set retain = 100 where tenant_id = ${actor.tenantId}::uuid`;
    expect(await log()).toEqual({ count: 100, oldest: 134, newest: 233 });
    await record(1);
    expect(await log()).toEqual({ count: 100, oldest: 135, newest: 234 });
    await db.sql`update realtime_streams set retain = 150 where tenant_id = ${actor.tenantId}::uuid`;
    await record(2);
    expect(await log()).toEqual({ count: 102, oldest: 135, newest: 236 });
  });
});
