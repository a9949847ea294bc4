import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { DeclaredElsewhereError } from '../errors.ts';
import { claim, forget, holds } from './declarations.repo.ts';
import type { DeclaringObject } from './declarations.schema.ts';

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

  it('refuses an object that claims a subject while another claim of it is being written, naming the holder', async () => {
    const subject = `tenant/${randomUUID()}`;
    const [first, second] = [tenantObject('first'), tenantObject('second')];
    let secondClaim!: Promise<unknown>;
    await db.system(async (tx) => {
      await claim(tx, subject, 'tenant "x"', first);
      // The second reads no claim (the first is not committed), then its write waits on the first's row.
      secondClaim = db.system((other) => claim(other, subject, 'tenant "x"', second));
      secondClaim.catch(() => {});
      await until(
        () => db.sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%insert into declarations%'`,
        (rows) => rows.length > 0,
        5_000,
      );
    });
    const refusal = await secondClaim.then(() => undefined, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DeclaredElsewhereError);
    expect((refusal as DeclaredElsewhereError).message).toBe('tenant "x" is declared by Tenant "first"');
    expect(await holderOf(subject)).toBe('first');
    // The holder claims again (a read only); the other is still refused.
    await db.system((tx) => claim(tx, subject, 'tenant "x"', first));
    await expect(db.system((tx) => claim(tx, subject, 'tenant "x"', second))).rejects.toBeInstanceOf(DeclaredElsewhereError);
  });

  it('lets an object that replaces a gone holder take the claim over, and only that holder', async () => {
    const subject = `tenant/${randomUUID()}`;
    const [gone, present, next] = [tenantObject('gone'), tenantObject('present'), tenantObject('next')];
    await db.system((tx) => claim(tx, subject, 'tenant "x"', gone));
    await expect(db.system((tx) => claim(tx, subject, 'tenant "x"', { ...next, replacing: [present.uid] }))).rejects.toBeInstanceOf(DeclaredElsewhereError);
    await db.system((tx) => claim(tx, subject, 'tenant "x"', { ...next, replacing: [gone.uid] }));
    expect(await holderOf(subject)).toBe('next');
  });

  it('lets only the holder remove a subject, claiming one nobody declared; forgetting drops only its own claim', async () => {
    const subject = `app/${randomUUID()}/key`;
    const [holder, other] = [tenantObject('holder'), tenantObject('other')];
    expect(await db.system((tx) => holds(tx, subject, holder))).toBe(true);
    expect(await holderOf(subject)).toBe('holder');
    expect(await db.system((tx) => holds(tx, subject, other))).toBe(false);
    await db.system((tx) => forget(tx, subject, other));
    expect(await holderOf(subject)).toBe('holder');
    await db.system((tx) => forget(tx, subject, holder));
    expect(await holderOf(subject)).toBeUndefined();
  });

  it('is out of reach of the application role', async () => {
    await expect(db.inTenant(randomUUID(), (tx) => tx`select * from declarations`)).rejects.toThrow(/permission denied/);
  });
});
