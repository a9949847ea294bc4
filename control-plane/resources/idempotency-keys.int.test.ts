import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import { ConflictError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { idempotently } from './idempotency-keys.ts';

/** Idempotency keys and resource versions stay inside their tenant, and a key lives 24 hours. */
describe('idempotency keys and resource versions in the database', () => {
  let db: Db;
  const suite = randomUUID().slice(0, 8);
  const tenants: string[] = [];
  const actor = (tenantId: string): Actor => ({ userId: randomUUID(), email: '', tenantId, tenantSlug: '', roles: [], permissions: new Set() });

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    for (const name of ['a', 'b']) tenants.push(await insertActiveTenant(db.sql, `idem-${name}-${suite}`));
  });
  afterAll(() => db?.close());

  it('replays within 24 hours, and lets an expired key start afresh', async () => {
    const caller = actor(tenants[0]!);
    let runs = 0;
    const work = async () => ({ run: ++runs });
    const call = (input: unknown) => db.inTenant(caller.tenantId, (tx) => idempotently(tx, caller, 'k1', { operation: 'test', input }, work));
    expect(await call({ a: 1, b: 2 })).toEqual({ run: 1 });
    expect(await call({ b: 2, a: 1 })).toEqual({ run: 1 });
    await expect(call({ a: 2 })).rejects.toBeInstanceOf(ConflictError);
    await db.sql`update idempotency_keys set expires_at = now() - interval '1 second' where tenant_id = ${caller.tenantId}::uuid and key = 'k1'`;
    expect(await call({ a: 2 })).toEqual({ run: 2 });
    expect(await call({ a: 2 })).toEqual({ run: 2 });
  });

  it('removes expired keys of the tenant as later keyed requests come', async () => {
    const caller = actor(tenants[0]!);
    await db.sql`insert into idempotency_keys (tenant_id, actor, key, fingerprint, response, expires_at)
      values (${caller.tenantId}::uuid, 'someone', 'old', 'x', '{}', now() - interval '1 hour'),
             (${tenants[1]!}::uuid, 'someone', 'old', 'x', '{}', now() - interval '1 hour')`;
    await db.inTenant(caller.tenantId, (tx) => idempotently(tx, caller, 'k2', { operation: 'test', input: {} }, async () => ({})));
    const left = await db.sql<{ tenant: string }[]>`select tenant_id::text as tenant from idempotency_keys where key = 'old' and tenant_id = any(${tenants}::uuid[])`;
    expect(left.map((row) => row.tenant)).toEqual([tenants[1]]);
  });

  it("keeps each tenant's keys and versions from the others, and versions append-only", async () => {
    const [a, b] = tenants as [string, string];
    const resourceId = randomUUID();
    await db.sql`insert into resource_versions (tenant_id, resource_id, type, version, operation, data, at)
      values (${a}::uuid, ${resourceId}::uuid, 'project', 1, 'create', '{"name":"a"}', now())`;
    await db.sql`insert into idempotency_keys (tenant_id, actor, key, fingerprint, response, expires_at)
      values (${a}::uuid, 'someone', 'mine', 'x', '{}', now() + interval '1 hour')`;
    const asB = <T>(fn: (tx: Parameters<Parameters<Db['inTenant']>[1]>[0]) => Promise<T>) => db.inTenant(b, fn);
    expect(await asB((tx) => tx`select 1 from resource_versions where resource_id = ${resourceId}::uuid`)).toHaveLength(0);
    expect(await asB((tx) => tx`select 1 from idempotency_keys where key = 'mine'`)).toHaveLength(0);
    expect(await asB((tx) => tx`update idempotency_keys set response = '{"x":1}' where key = 'mine' returning 1`)).toHaveLength(0);
    await expect(
      asB((tx) => tx`insert into resource_versions (tenant_id, resource_id, type, version, operation, data, at) values (${a}::uuid, ${randomUUID()}::uuid, 'project', 1, 'create', '{}', now())`),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(asB((tx) => tx`insert into idempotency_keys (tenant_id, actor, key, fingerprint, expires_at) values (${a}::uuid, 'x', 'planted', 'x', now())`)).rejects.toMatchObject({
      code: '42501',
    });
    await expect(db.inTenant(a, (tx) => tx`update resource_versions set data = '{}' where resource_id = ${resourceId}::uuid`)).rejects.toMatchObject({ code: '42501' });
    await expect(db.inTenant(a, (tx) => tx`delete from resource_versions where resource_id = ${resourceId}::uuid`)).rejects.toMatchObject({ code: '42501' });
    expect(await db.inTenant(a, (tx) => tx`select data from resource_versions where resource_id = ${resourceId}::uuid`)).toEqual([{ data: { name: 'a' } }]);
  });
});
