import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/client.ts';
import { claim, DeclaredElsewhereError, release, type DeclaringObject } from './declarations.ts';

/** Which object declares a tenant or app, against real PostgreSQL. */
describe('declarations', () => {
  let db: Db;
  beforeAll(() => {
    db = createDb(inject('databaseUrl'));
  });
  afterAll(() => db.close());

  const tenantObject = (name: string): DeclaringObject => ({ kind: 'Tenant', name, uid: randomUUID() });
  const holderOf = async (subject: string) =>
    (await db.sql<{ name: string }[]>`select object_name as name from declarations where subject = ${subject}`)[0]?.name;

  it('gives a subject to one of two objects that claim it at once; the other is told who holds it', async () => {
    const subject = `tenant/${randomUUID()}`;
    const [a, b] = [tenantObject('a'), tenantObject('b')];
    const results = await Promise.allSettled([a, b].map((object) => db.system((tx) => claim(tx, subject, 'tenant "x"', object))));
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toBeInstanceOf(DeclaredElsewhereError);
    const holder = await holderOf(subject);
    expect((refused[0]!.reason as DeclaredElsewhereError).holder.name).toBe(holder);
    expect((refused[0]!.reason as DeclaredElsewhereError).message).toBe(`tenant "x" is declared by Tenant "${holder}"`);
    // The holder claims again without a write; the other is still refused.
    const [holding, other] = holder === 'a' ? [a, b] : [b, a];
    await db.system((tx) => claim(tx, subject, 'tenant "x"', holding));
    await expect(db.system((tx) => claim(tx, subject, 'tenant "x"', other))).rejects.toBeInstanceOf(DeclaredElsewhereError);
  });

  it('lets an object that replaces a gone holder take the claim over, and only that holder', async () => {
    const subject = `tenant/${randomUUID()}`;
    const [gone, present, next] = [tenantObject('gone'), tenantObject('present'), tenantObject('next')];
    await db.system((tx) => claim(tx, subject, 'tenant "x"', gone));
    await expect(db.system((tx) => claim(tx, subject, 'tenant "x"', { ...next, replacing: [present.uid] }))).rejects.toBeInstanceOf(DeclaredElsewhereError);
    await db.system((tx) => claim(tx, subject, 'tenant "x"', { ...next, replacing: [gone.uid] }));
    expect(await holderOf(subject)).toBe('next');
  });

  it('releases a subject only to its holder (or when nobody holds it), dropping the claim', async () => {
    const subject = `app/${randomUUID()}`;
    const [holder, other] = [tenantObject('holder'), tenantObject('other')];
    expect(await db.system((tx) => release(tx, subject, other))).toBe(true);
    await db.system((tx) => claim(tx, subject, 'app "x"', holder));
    expect(await db.system((tx) => release(tx, subject, other))).toBe(false);
    expect(await holderOf(subject)).toBe('holder');
    expect(await db.system((tx) => release(tx, subject, holder))).toBe(true);
    expect(await holderOf(subject)).toBeUndefined();
  });

  it('is out of reach of the application role', async () => {
    await expect(db.inTenant(randomUUID(), (tx) => tx`select * from declarations`)).rejects.toThrow(/permission denied/);
  });
});
