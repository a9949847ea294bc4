import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { until } from '../../test/harness/until.ts';
import { tenantBlobPrefix, type BlobStore } from '../blobs/blob-store.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { createDocumentsService, type DocumentsService } from '../documents/documents.service.ts';
import { systemActor } from '../identity/system-actor.ts';
import { sweepExpiredIdempotencyKeys } from '../resources/idempotency-keys.ts';
import { deleteExpiredStorageReservations } from '../capabilities/storage-usage.ts';
import { deletePastStepCharges, recordStepCharge } from '../chat/chat.repo.ts';
import { createSweeps, deleteInBatches, staleUploadsSweep } from './sweeps.service.ts';

/** Sweeps on a schedule: what a tenant left behind goes though the tenant never comes back, and one process runs each sweep per interval. */
describe('scheduled sweeps', () => {
  let db: Db;
  let blobs: BlobStore;
  let root: string;
  let documents: DocumentsService;
  const suite = randomUUID().slice(0, 8);

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    root = await mkdtemp(join(tmpdir(), 'sweeps-'));
    blobs = createLocalDirectoryBlobStore(root);
    documents = createDocumentsService({ db, blobs, log: () => {} });
  });
  afterAll(async () => {
    await db?.close();
    await rm(root, { recursive: true, force: true });
  });

  it("removes a tenant's stale staged upload and expired idempotency keys without any later request of that tenant", async () => {
    const tenantId = await insertActiveTenant(db.sql, `sweep-${suite}`);
    const orphan = await documents.stage(systemActor(tenantId), { filename: 'note.txt', contentType: 'text/plain' }, (async function* () {
      yield new TextEncoder().encode('The process ended before this became a document.');
    })());
    const objects = async () => (await blobs.list(`${tenantBlobPrefix(tenantId)}documents/`)).map((o) => o.key);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    for (const key of await objects()) await utimes(join(root, key), twoHoursAgo, twoHoursAgo);
    await db.sql`insert into idempotency_keys (tenant_id, actor, key, fingerprint, response, expires_at) values
      (${tenantId}::uuid, 'someone', 'expired', 'f', '{}', now() - interval '1 hour'),
      (${tenantId}::uuid, 'someone', 'live', 'f', '{}', now() + interval '1 hour')`;

    const sweeps = createSweeps({
      db,
      checkMs: 50,
      sweeps: [
        { ...staleUploadsSweep(db, (tenant) => documents.sweepStaleUploads(tenant), 60_000), name: `stale-uploads-${suite}` },
        { name: `expired-idempotency-keys-${suite}`, everyMs: 60_000, run: () => sweepExpiredIdempotencyKeys(db) },
      ],
      log: () => {},
    });
    sweeps.start();
    try {
      await until(objects, (keys) => !keys.some((key) => key.includes(orphan.uploadId)), 30_000);
      await until(() => db.sql<{ key: string }[]>`select key from idempotency_keys where tenant_id = ${tenantId}::uuid order by key`, (rows) => rows.length === 1, 30_000);
    } finally {
      await sweeps.stop();
    }
    expect((await db.sql<{ key: string }[]>`select key from idempotency_keys where tenant_id = ${tenantId}::uuid`).map((r) => r.key)).toEqual(['live']);
  });

  it('removes chat step charges past their retention and expired storage reservations, keeping recent charges and live reservations', async () => {
    const tenantId = await insertActiveTenant(db.sql, `sweep-rows-${suite}`);
    const execution = randomUUID();
    // A charge older than any retry of its step is removed; yesterday's and today's keep a retried step from counting twice.
    await db.sql`insert into chat_step_charges (tenant_id, execution_id, step_id, charged_at) values
      (${tenantId}::uuid, ${execution}::uuid, 'past', now() - interval '8 days'),
      (${tenantId}::uuid, ${execution}::uuid, 'yesterday', date_trunc('day', now(), 'UTC') - interval '1 minute'),
      (${tenantId}::uuid, ${execution}::uuid, 'today', now())`;
    // A reservation of a process that ended mid-upload, past its expiry, and one of an upload under way.
    const [ended, streaming] = [randomUUID(), randomUUID()];
    await db.sql`insert into tenant_storage_reservations (id, tenant_id, bytes, expires_at) values
      (${ended}::uuid, ${tenantId}::uuid, 1000, now() - interval '1 minute'),
      (${streaming}::uuid, ${tenantId}::uuid, 2000, now() + interval '1 hour')`;
    const charges = () => db.sql<{ step: string }[]>`select step_id as step from chat_step_charges where tenant_id = ${tenantId}::uuid order by step_id`;
    const reservations = () => db.sql<{ id: string }[]>`select id::text as id from tenant_storage_reservations where tenant_id = ${tenantId}::uuid`;

    const sweeps = createSweeps({
      db,
      checkMs: 50,
      sweeps: [
        { name: `past-chat-step-charges-${suite}`, everyMs: 60_000, run: () => deleteInBatches(db, deletePastStepCharges) },
        { name: `expired-storage-reservations-${suite}`, everyMs: 60_000, run: () => deleteInBatches(db, deleteExpiredStorageReservations) },
      ],
      log: () => {},
    });
    sweeps.start();
    try {
      await until(charges, (rows) => rows.length === 2, 30_000);
      await until(reservations, (rows) => rows.length === 1, 30_000);
    } finally {
      await sweeps.stop();
    }
    expect((await charges()).map((r) => r.step)).toEqual(['today', 'yesterday']);
    expect((await reservations()).map((r) => r.id)).toEqual([streaming]);
  });

  it('counts an ai_chat step charged before UTC midnight and retried after it once: the sweep keeps its charge', async () => {
    const tenantId = await insertActiveTenant(db.sql, `sweep-midnight-${suite}`);
    const step = { executionId: randomUUID(), stepId: 'ask' };
    // The step's first attempt was charged a minute before today's UTC midnight; the sweep runs before its retry.
    await db.sql`insert into chat_step_charges (tenant_id, execution_id, step_id, charged_at)
      values (${tenantId}::uuid, ${step.executionId}::uuid, ${step.stepId}, date_trunc('day', now(), 'UTC') - interval '1 minute')`;
    await deleteInBatches(db, deletePastStepCharges);
    // The retry finds the charge: its message is not counted again.
    expect(await db.inTenant(tenantId, (tx) => recordStepCharge(tx, step))).toBe(false);
    expect(await db.inTenant(tenantId, (tx) => recordStepCharge(tx, { ...step, stepId: 'another' }))).toBe(true);
  });

  it('runs a sweep in one process per interval however many processes ask', async () => {
    let runs = 0;
    const sweep = { name: `counted-${suite}`, everyMs: 60_000, run: async () => ++runs };
    const processes = Array.from({ length: 4 }, () => createSweeps({ db, sweeps: [sweep], log: () => {} }));
    await Promise.all(processes.map((p) => p.runDue()));
    expect(runs).toBe(1);
    await Promise.all(processes.map((p) => p.runDue()));
    expect(runs).toBe(1);
  });
});
