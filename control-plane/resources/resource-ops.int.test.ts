import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant, insertUser } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import { ForbiddenError, NotFoundError, ValidationError, VersionConflictError } from '../errors.ts';
import { createObjectTypesService, type ObjectTypesService } from '../object-types/object-types.service.ts';
import { resourceOps } from './resource-ops.ts';

/** The resource engine's operations compose: several run in one tenant transaction, all or none. */
describe('resource operations in one transaction', () => {
  let db: Db;
  let objectTypes: ObjectTypesService;
  let tenantId: string;
  let userId: string;
  const suite = randomUUID();

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    objectTypes = createObjectTypesService({ db });
    tenantId = await insertActiveTenant(db.sql, `ops-${suite.slice(0, 8)}`);
    userId = await insertUser(db.sql, `ops-${suite}`);
  });
  afterAll(() => db?.close());

  const inTenant = <T>(fn: (ops: ReturnType<typeof resourceOps>, tx: Parameters<Parameters<Db['inTenant']>[1]>[0]) => Promise<T>) =>
    db.inTenant(tenantId, (tx) => fn(resourceOps(tx, objectTypes.validate), tx));
  const project = (tx: Parameters<Parameters<Db['inTenant']>[1]>[0]) => objectTypes.requireWritable(tx, 'project');
  const names = () => db.sql<{ name: string }[]>`select data ->> 'name' as name from resources where tenant_id = ${tenantId}::uuid order by 1`;

  it('commits an insert, a checked write and a delete made in one transaction together', async () => {
    const kept = await inTenant(async (ops, tx) => {
      const type = await project(tx);
      const a = await ops.insert(type, { name: 'a', status: 'active' }, userId);
      const b = await ops.insert(type, { name: 'b', status: 'active' }, userId);
      const written = await ops.write(type, a.id, { change: (current) => ({ ...current.data, name: 'a2' }), expectedVersion: 1, by: userId });
      expect(written).toMatchObject({ id: a.id, version: 2, data: { name: 'a2', status: 'active' }, createdBy: userId, updatedBy: userId });
      expect(await ops.delete('project', b.id, { by: userId })).toBe(true);
      expect(await ops.read('project', b.id)).toBeUndefined();
      return a.id;
    });
    expect((await names()).map((r) => r.name)).toEqual(['a2']);
    const [stored] = await db.sql<{ version: number }[]>`select version from resources where id = ${kept}::uuid`;
    expect(stored!.version).toBe(2);
  });

  it('rolls the write back when its history entry, sent with the commit, fails', async () => {
    const created = await inTenant(async (ops, tx) => ops.insert(await project(tx), { name: 'logged' }, userId));
    // An entry already holding version 2 makes the write's own entry fail (primary key).
    await db.sql`insert into resource_versions (tenant_id, resource_id, type, version, operation, data, at)
      values (${tenantId}::uuid, ${created.id}::uuid, 'project', 2, 'update', '{}', now())`;
    const failure = await inTenant(async (ops, tx) =>
      ops.write(await project(tx), created.id, { change: (current) => ({ ...current.data, name: 'never' }), expectedVersion: 1, by: userId }),
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: '23505' });
    const [stored] = await db.sql<{ version: number; name: string }[]>`select version, data ->> 'name' as name from resources where id = ${created.id}::uuid`;
    expect(stored).toEqual({ version: 1, name: 'logged' });
    // The connection went back clean: the next transaction on the pool works.
    expect(await inTenant(async (ops) => (await ops.read('project', created.id))?.version)).toBe(1);
  });

  it('leaves nothing of the transaction behind when a later operation fails', async () => {
    const before = await names();
    const failure = await inTenant(async (ops, tx) => {
      const type = await project(tx);
      const c = await ops.insert(type, { name: 'c' }, userId);
      await ops.write(type, c.id, { change: (current) => ({ ...current.data, name: 'c2' }), by: userId });
      return ops.write(type, c.id, { change: (current) => current.data, expectedVersion: 1, by: userId });
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(VersionConflictError);
    expect((failure as VersionConflictError).details).toEqual({ expected: 1, actual: 2, currentVersion: 2 });
    expect(await names()).toEqual(before);
  });

  it('checks a write against the type and the stored row: unknown id, stale version, invalid data', async () => {
    const created = await inTenant(async (ops, tx) => ops.insert(await project(tx), { name: 'checked' }, userId));
    await expect(inTenant(async (ops, tx) => ops.write(await project(tx), randomUUID(), { change: () => ({ name: 'x' }), by: userId }))).rejects.toBeInstanceOf(NotFoundError);
    await expect(inTenant(async (ops, tx) => ops.write(await project(tx), created.id, { change: () => ({ name: '' }), by: userId }))).rejects.toBeInstanceOf(ValidationError);
    await expect(inTenant(async (ops, tx) => ops.insert(await project(tx), { name: 'x', budget: 'lots' }, userId))).rejects.toMatchObject({
      details: { field: 'budget' },
    });
    const [stored] = await db.sql<{ data: unknown; version: number }[]>`select data, version from resources where id = ${created.id}::uuid`;
    expect(stored).toEqual({ data: { name: 'checked' }, version: 1 });
  });

  it('replaces at a version without locking first, and refuses as the checked write does: unknown id, stale version, invalid data', async () => {
    const created = await inTenant(async (ops, tx) => ops.insert(await project(tx), { name: 'replaced' }, userId));
    const replace = (id: string, data: Record<string, unknown>, expectedVersion: number) => inTenant(async (ops, tx) => ops.replace(await project(tx), id, { data, expectedVersion, by: userId }));
    // A missing resource is 404 and a stale version 409, even with data the type refuses; the right version with it is 400.
    await expect(replace(randomUUID(), { name: '' }, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(replace('not-an-id', { name: 'x' }, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(replace(created.id, { name: '' }, 7)).rejects.toMatchObject({ details: { currentVersion: 1 } });
    await expect(replace(created.id, { name: 'x' }, 7)).rejects.toBeInstanceOf(VersionConflictError);
    await expect(replace(created.id, { name: '' }, 1)).rejects.toBeInstanceOf(ValidationError);
    const written = await replace(created.id, { name: 'r2', status: 'active' }, 1);
    expect(written).toMatchObject({ id: created.id, version: 2, data: { name: 'r2', status: 'active' }, updatedBy: userId });
    await expect(replace(created.id, { name: 'r3' }, 1)).rejects.toMatchObject({ details: { currentVersion: 2 } });
    const entries = await db.sql`select version, operation, data from resource_versions where resource_id = ${created.id}::uuid order by version`;
    expect(entries).toEqual([
      { version: 1, operation: 'create', data: { name: 'replaced' } },
      { version: 2, operation: 'update', data: { name: 'r2', status: 'active' } },
    ]);
  });

  it('records every change in the history within its transaction: create, update, a named action, delete', async () => {
    const id = await inTenant(async (ops, tx) => {
      const type = await project(tx);
      const created = await ops.insert(type, { name: 'h', status: 'active' }, userId);
      await ops.write(type, created.id, { change: (current) => ({ ...current.data, name: 'h2' }), by: userId });
      await ops.write(type, created.id, { change: (current) => ({ ...current.data, status: 'archived' }), by: userId, operation: 'action:archive' });
      expect(await ops.delete('project', created.id, { expectedVersion: 3, by: userId })).toBe(true);
      return created.id;
    });
    const entries = await db.sql`select version, operation, action, data, actor::text as actor from resource_versions where resource_id = ${id}::uuid order by version`;
    expect(entries).toEqual([
      { version: 1, operation: 'create', action: null, data: { name: 'h', status: 'active' }, actor: userId },
      { version: 2, operation: 'update', action: null, data: { name: 'h2', status: 'active' }, actor: userId },
      { version: 3, operation: 'action', action: 'archive', data: { name: 'h2', status: 'archived' }, actor: userId },
      { version: 4, operation: 'delete', action: null, data: { name: 'h2', status: 'archived' }, actor: userId },
    ]);

    const rolledBack = await inTenant(async (ops, tx) => {
      const created = await ops.insert(await project(tx), { name: 'gone' }, userId);
      await ops.write(await project(tx), created.id, { change: () => ({ name: '' }), by: userId });
    }).catch((error: unknown) => error);
    expect(rolledBack).toBeInstanceOf(ValidationError);
    expect(await db.sql`select 1 from resource_versions v where v.tenant_id = ${tenantId}::uuid and v.data ->> 'name' = 'gone'`).toHaveLength(0);
  });

  it('sees a type that only another service writes as such, and says what writes it', async () => {
    const actor = { userId, email: `ops-${suite}@example.test`, tenantId, tenantSlug: `ops-${suite.slice(0, 8)}`, roles: ['viewer'], permissions: new Set(['resources.read']) };
    const { items } = await objectTypes.list(actor);
    const enrollment = items.find((t) => t.key === 'tenant-vertical-enrollment');
    expect(enrollment).toMatchObject({ builtIn: true, writtenThrough: 'the apps API or an App object' });
    expect(items.find((t) => t.key === 'project')).toMatchObject({ name: 'Project', builtIn: true, writtenThrough: null, status: 'published', version: 2 });
    const refused = await db.inTenant(tenantId, (tx) => objectTypes.requireWritable(tx, 'tenant-vertical-enrollment')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect((refused as Error).message).toBe('tenant-vertical-enrollment resources are written only through the apps API or an App object');
    await expect(db.inTenant(tenantId, (tx) => objectTypes.require(tx, `missing-${suite}`))).rejects.toBeInstanceOf(NotFoundError);
  });
});
