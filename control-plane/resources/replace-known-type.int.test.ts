import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant, insertUser } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { createObjectTypesService, type ObjectTypesService } from '../object-types/object-types.service.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { createResourcesService } from './resources.service.ts';

/**
 * A PUT at a version whose type the process already read is one statement that writes only while
 * the type is still as it was read: a change of the type made by another process meanwhile is
 * what the PUT is judged by.
 */
describe('a PUT at a version of a type the process knows', () => {
  let db: Db;
  let actor: Actor;
  let gadget: ObjectType;
  const suite = randomUUID();
  // Two control-plane processes over one database; the first's type reads and transactions are counted.
  let typeReads = 0;
  let transactions = 0;
  let other: ObjectTypesService;
  let first: ReturnType<typeof createResourcesService>;

  beforeAll(async () => {
    // One connection for the PUTs that share theirs, so that every such PUT below queues on it.
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl'), writeConnections: 1 });
    const own = createObjectTypesService({ db });
    const counted: ObjectTypesService = {
      ...own,
      requireWritable: (tx, name) => {
        typeReads++;
        return own.requireWritable(tx, name);
      },
    };
    const countedDb: Db = {
      ...db,
      inTenant: (tenantId, fn) => {
        transactions++;
        return db.inTenant(tenantId, fn);
      },
      writeInTenant: (tenantId, statement) => {
        transactions++;
        return db.writeInTenant(tenantId, statement);
      },
    };
    first = createResourcesService({ db: countedDb, objectTypes: counted });
    other = createObjectTypesService({ db });
    const slug = `put-${suite.slice(0, 8)}`;
    const tenantId = await insertActiveTenant(db.sql, slug);
    const userId = await insertUser(db.sql, `put-${suite}`);
    actor = { userId, email: 'put@example.test', tenantId, tenantSlug: slug, roles: ['admin'], permissions: new Set() };
    gadget = await other.create(actor, {
      name: 'Gadget',
      schema: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } },
      status: 'published',
      indexes: [],
      searchFields: [],
      actions: {},
      fileProperties: {},
    });
  });
  afterAll(() => db?.close());

  const put = (id: string, version: number, data: Record<string, unknown>) => first.replaceAtVersion(actor, { type: 'gadget', id, data, version });
  const history = (id: string) =>
    db.sql<{ version: number; operation: string; data: unknown; actor: string }[]>`
      select version, operation, data, actor::text as actor from resource_versions where resource_id = ${id}::uuid order by version`;

  it('writes without reading the type again, and records the change in the history', async () => {
    const made = await first.create(actor, 'gadget', { name: 'a', size: 1 });
    expect((await put(made.id, 1, { name: 'b', size: 2 })).version).toBe(2);
    const reads = typeReads;
    const written = await put(made.id, 2, { name: 'c', size: 3 });
    expect(typeReads).toBe(reads);
    expect(written).toMatchObject({ id: made.id, type: 'gadget', version: 3, data: { name: 'c', size: 3 }, updatedBy: actor.userId });
    expect(await first.get(actor, 'gadget', made.id)).toEqual(written);
    expect(await history(made.id)).toEqual([
      { version: 1, operation: 'create', data: { name: 'a', size: 1 }, actor: actor.userId },
      { version: 2, operation: 'update', data: { name: 'b', size: 2 }, actor: actor.userId },
      { version: 3, operation: 'update', data: { name: 'c', size: 3 }, actor: actor.userId },
    ]);
  });

  it('answers 409 with the current version for a stale one and 404 for a missing resource, writing nothing', async () => {
    const made = await first.create(actor, 'gadget', { name: 'a' });
    await put(made.id, 1, { name: 'b' });
    await expect(put(made.id, 1, { name: 'stale' })).rejects.toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 2 } });
    await expect(put(randomUUID(), 1, { name: 'none' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await first.get(actor, 'gadget', made.id)).data).toEqual({ name: 'b' });
    expect((await history(made.id)).length).toBe(2);
  });

  it('answers data the known type refuses from the checked path alone: one transaction, nothing written', async () => {
    const made = await first.create(actor, 'gadget', { name: 'a', size: 1 });
    await put(made.id, 1, { name: 'b', size: 2 });
    const before = transactions;
    expect((await put(made.id, 2, { name: 'c', size: 3 })).version).toBe(3);
    expect(transactions - before).toBe(1);
    const refusedFrom = transactions;
    await expect(put(made.id, 3, { name: 'd', size: 'big' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(transactions - refusedFrom).toBe(1);
    expect(await first.get(actor, 'gadget', made.id)).toMatchObject({ version: 3, data: { name: 'c', size: 3 } });
    expect((await history(made.id)).length).toBe(3);
  });

  it("lets no PUT waiting for a locked row hold up another tenant's PUT queued behind it on the shared connection", async () => {
    const slug = `put2-${suite.slice(0, 8)}`;
    const otherTenant = await insertActiveTenant(db.sql, slug);
    const otherActor: Actor = { ...actor, tenantId: otherTenant, tenantSlug: slug };
    await other.create(otherActor, { name: 'Gadget', schema: gadget.schema, status: 'published', indexes: [], searchFields: [], actions: {}, fileProperties: {} });
    const locked = await first.create(actor, 'gadget', { name: 'a' });
    const free = await first.create(otherActor, 'gadget', { name: 'b' });
    await put(locked.id, 1, { name: 'a2' });
    await first.replaceAtVersion(otherActor, { type: 'gadget', id: free.id, data: { name: 'b2' }, version: 1 });
    // Another session holds the first resource's row until the end of the test.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let lockTaken!: () => void;
    const taken = new Promise<void>((resolve) => (lockTaken = resolve));
    const holder = db.sql.begin(async (tx) => {
      await tx`select 1 from resources where id = ${locked.id}::uuid for update`;
      lockTaken();
      await held;
    });
    await taken;
    let waitingDone = false;
    const waiting = put(locked.id, 2, { name: 'a3' }).finally(() => (waitingDone = true));
    const behind = await first.replaceAtVersion(otherActor, { type: 'gadget', id: free.id, data: { name: 'b3' }, version: 2 });
    expect(behind).toMatchObject({ version: 3, data: { name: 'b3' } });
    expect(waitingDone).toBe(false);
    release();
    await holder;
    // The waiting PUT then writes, once: its first attempt gave up and wrote nothing.
    expect(await waiting).toMatchObject({ version: 3, data: { name: 'a3' } });
    expect((await history(locked.id)).map((entry) => entry.version)).toEqual([1, 2, 3]);
  });

  it('judges the data by the type as another process changed it since', async () => {
    const made = await first.create(actor, 'gadget', { name: 'short' });
    await put(made.id, 1, { name: 'known' });
    // Stricter, and still valid for every stored gadget: the change is allowed.
    const stricter = await other.update(actor, {
      objectTypeId: gadget.objectTypeId,
      changes: { schema: { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, size: { type: 'integer' } } } },
    });
    expect(stricter.version).toBe(gadget.version + 1);
    await expect(put(made.id, 2, { name: 'much too long' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await first.get(actor, 'gadget', made.id)).toMatchObject({ version: 2, data: { name: 'known' } });
    // A draft takes no writes, however well the process knew the type.
    await other.update(actor, { objectTypeId: gadget.objectTypeId, changes: { status: 'draft' } });
    await expect(put(made.id, 2, { name: 'fits' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await other.update(actor, { objectTypeId: gadget.objectTypeId, changes: { status: 'published' } });
    expect(await put(made.id, 2, { name: 'fits' })).toMatchObject({ version: 3, data: { name: 'fits' } });
    expect((await history(made.id)).map((entry) => entry.version)).toEqual([1, 2, 3]);
  });
});
