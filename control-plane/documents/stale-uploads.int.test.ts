import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { tenantBlobPrefix, type BlobStore } from '../blobs/blob-store.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { systemActor } from '../identity/system-actor.ts';
import { STALE_UPLOAD_MS } from './document-uploads.ts';
import { createDocumentsService, type DocumentsService } from './documents.service.ts';

/** Uploads staged by a process that ended before they became documents are removed once stale; documents' files never are. */
describe('stale staged uploads', () => {
  let db: Db;
  let blobs: BlobStore;
  let root: string;
  let documents: DocumentsService;
  let tenantId: string;
  let otherTenantId: string;

  const createTenant = (slug: string) => insertActiveTenant(db.sql, slug);
  const stage = (tenant: string, text: string) =>
    documents.stage(systemActor(tenant), { filename: 'note.txt', contentType: 'text/plain' }, (async function* () {
      yield new TextEncoder().encode(text);
    })());
  const objectsOf = async (tenant: string) => (await blobs.list(`${tenantBlobPrefix(tenant)}documents/`)).map((o) => o.key);

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    root = await mkdtemp(join(tmpdir(), 'stale-uploads-'));
    blobs = createLocalDirectoryBlobStore(root);
    documents = createDocumentsService({ db, blobs, log: () => {} });
    const suite = randomUUID().slice(0, 8);
    tenantId = await createTenant(`stale-${suite}`);
    otherTenantId = await createTenant(`stale-other-${suite}`);
  });
  afterAll(async () => {
    await db?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('removes the tenant’s uploads that never became documents once stale, keeping documents and fresh uploads', async () => {
    const kept = await stage(tenantId, 'This one becomes a document.');
    await documents.create(systemActor(tenantId), { uploadId: kept.uploadId, tags: [], metadata: {}, autoClassify: false, autoIndex: false });
    const orphan = await stage(tenantId, 'The process ended before this became a document.');
    const othersOrphan = await stage(otherTenantId, 'Another tenant’s upload.');
    expect((await objectsOf(tenantId)).filter((key) => key.includes(orphan.uploadId))).toHaveLength(2);

    // Not stale yet: nothing goes.
    expect(await documents.sweepStaleUploads(tenantId)).toEqual([]);
    expect((await objectsOf(tenantId)).filter((key) => key.includes(orphan.uploadId))).toHaveLength(2);

    // An hour on, the orphan goes; the document's file stays, and so does the other tenant's upload (its own sweep).
    expect(await documents.sweepStaleUploads(tenantId, Date.now() + STALE_UPLOAD_MS + 1000)).toEqual([orphan.uploadId]);
    const left = await objectsOf(tenantId);
    expect(left.some((key) => key.includes(orphan.uploadId))).toBe(false);
    expect(left.filter((key) => key.includes(kept.uploadId))).toEqual([expect.stringMatching(/original$/)]);
    expect((await documents.open(systemActor(tenantId), kept.uploadId)).file.filename).toBe('note.txt');
    expect((await objectsOf(otherTenantId)).filter((key) => key.includes(othersOrphan.uploadId))).toHaveLength(2);
    // Idempotent.
    expect(await documents.sweepStaleUploads(tenantId, Date.now() + STALE_UPLOAD_MS + 1000)).toEqual([]);
  });
});
