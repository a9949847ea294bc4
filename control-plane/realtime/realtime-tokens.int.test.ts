import { randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/client.ts';
import { migrate } from '../app/migrate.ts';
import { createSecretBox, newSecretsKey } from '../secrets/secret-box.ts';
import { createRealtimeTokens } from './realtime-tokens.ts';

/**
 * Signing keys on their schedule, in a database of this file's own: rotations here retire keys
 * that the run's other suites sign with.
 */
describe('realtime signing keys on a schedule', () => {
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const database = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let db: Db | undefined;
  const grant = { tenantId: randomUUID(), userId: randomUUID(), channels: ['resources'] };
  const secrets = createSecretBox(newSecretsKey());

  beforeAll(async () => {
    // Making a database takes the cluster's superuser (the test cluster's; not an outside DATABASE_URL's owner).
    const [me] = await admin<{ rolsuper: boolean }[]>`select rolsuper from pg_roles where rolname = current_user`;
    if (!me?.rolsuper) return;
    await admin.unsafe(`create database ${database}`);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${database}`;
    const asAdmin = postgres(url.toString(), { max: 1, onnotice: () => {} });
    for (const { extname } of await admin<{ extname: string }[]>`select extname from pg_extension where extname <> 'plpgsql'`) await asAdmin.unsafe(`create extension if not exists "${extname}"`);
    await asAdmin.end();
    await migrate(url.toString());
    db = createDb(url.toString());
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    if (db) await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.end();
  });

  it('signs with a new key once the current one is older than the schedule, and verifies the previous one through the overlap only', async ({ skip }) => {
    if (!db) skip();
    const tokens = createRealtimeTokens({ db: db!, secrets, keys: { rotateAfterMs: 0 } });
    const first = await tokens.issue(grant, 60);
    const second = await tokens.issue(grant, 60);
    const [kid1, kid2] = [first, second].map((t) => decodeProtectedHeader(t.token).kid);
    expect(kid2).not.toBe(kid1);
    expect(await tokens.verify(first.token)).toMatchObject(grant);
    // The overlap ends: the previous key no longer verifies, the current one does.
    await db!.sql`update realtime_signing_keys set retires_at = now() - interval '1 second' where id = ${Number(kid1)}`;
    await expect(tokens.verify(first.token)).rejects.toThrow(/retired key/);
    expect(await tokens.verify(second.token)).toMatchObject(grant);
  });

  it('makes one signing key for instances that sign at once, and keeps it while it is younger than the schedule', async ({ skip }) => {
    if (!db) skip();
    // No key yet, as on a new platform: instances that sign at once make one between them.
    await db!.sql`delete from realtime_signing_keys`;
    const [one, two] = [createRealtimeTokens({ db: db!, secrets }), createRealtimeTokens({ db: db!, secrets })];
    const kids = await Promise.all([one.issue(grant, 60), two.issue(grant, 60), one.issue(grant, 60)]);
    expect(new Set(kids.map((t) => decodeProtectedHeader(t.token).kid)).size).toBe(1);
  });

  it('deletes keys a day after they retired, and prunes tickets whose tokens expired', async ({ skip }) => {
    if (!db) skip();
    const tokens = createRealtimeTokens({ db: db!, secrets });
    const old = await tokens.issue(grant, 60);
    const oldKid = Number(decodeProtectedHeader(old.token).kid);
    await db!.sql`update realtime_signing_keys set retires_at = now() - interval '25 hours' where id = ${oldKid}`;
    await tokens.rotate();
    expect(await db!.sql`select 1 from realtime_signing_keys where id = ${oldKid}`).toHaveLength(0);
    await expect(tokens.verify(old.token)).rejects.toThrow(/invalid realtime token/);

    const fresh = await tokens.issue(grant, 60);
    await tokens.consume(await tokens.verify(fresh.token));
    await db!.sql`insert into realtime_tickets (jti, expires_at) values (${randomUUID()}, now() - interval '1 minute')`;
    // A new instance prunes at its first consumption.
    const another = createRealtimeTokens({ db: db!, secrets });
    const next = await another.issue(grant, 60);
    await another.consume(await another.verify(next.token));
    await expect(another.consume(await another.verify(fresh.token))).rejects.toThrow(/already been used/);
    const left = await db!.sql<{ expired: boolean }[]>`select expires_at < now() as expired from realtime_tickets`;
    expect(left.length).toBe(2);
    expect(left.every((r) => !r.expired)).toBe(true);
  });
});
