import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { tenantPlanSetter } from '../tenants/tenant-ports.ts';
import { createCapabilitiesService } from '../capabilities/capabilities.service.ts';
import { createDb, type Db } from '../db/client.ts';
import { systemActor } from '../identity/system-actor.ts';
import { createDocumentFiles, type DocumentFiles } from './document-files.ts';
import { createDocumentsService, type DocumentsService } from './documents.service.ts';

/** Pages read by OCR are metered per tenant and UTC day against the plan's `documents.ocr` `maxPagesPerDay` (real OCR, real PostgreSQL). */
describe('OCR page metering', () => {
  let db: Db;
  let root: string;
  let documents: DocumentsService;
  let files: DocumentFiles;
  let tenantId: string;
  let image: Uint8Array;

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    root = await mkdtemp(join(tmpdir(), 'ocr-metering-'));
    const deps = { db, blobs: createLocalDirectoryBlobStore(root), capabilities: createCapabilitiesService({ db, setTenantPlan: tenantPlanSetter(db) }), log: () => {} };
    files = createDocumentFiles(deps);
    documents = createDocumentsService({ ...deps, files });
    image = new Uint8Array(await readFile(new URL('../extract/fixtures/ocr.png', import.meta.url)));
    const slug = `ocr-${randomUUID().slice(0, 8)}`;
    const [tenant] = await db.sql<{ id: string }[]>`
      insert into tenants (slug, name, domains, usecase, starter_template, home_region, status, plan)
      values (${slug}, ${slug}, '{}', 'generic', 'blank-vertical-template', 'eu', 'active', 'team') returning id::text as id`;
    tenantId = tenant!.id;
    await db.sql`insert into capability_overrides (tenant_id, capability, allowed, limits, reason)
      values (${tenantId}::uuid, 'documents.ocr', true, ${db.sql.json({ maxPagesPerDay: 2 })}, 'a small daily budget')`;
  });
  afterAll(async () => {
    await files?.close();
    await db?.close();
    await rm(root, { recursive: true, force: true });
  });

  const imageDocument = async () => {
    const actor = systemActor(tenantId);
    const staged = await documents.stage(actor, { filename: 'scan.png', contentType: 'image/png' }, (async function* () {
      yield image;
    })());
    return documents.create(actor, { uploadId: staged.uploadId, tags: [], metadata: {}, autoClassify: false, autoIndex: false });
  };
  const pagesToday = async () => (await db.sql<{ pages: number }[]>`select pages from document_ocr_pages where tenant_id = ${tenantId}::uuid`)[0]?.pages ?? 0;

  it('reads images until the day’s pages are used up, then refuses with 429 until the next UTC day, counting nothing more', async () => {
    const [first, second, third] = [await imageDocument(), await imageDocument(), await imageDocument()];
    await documents.classify(systemActor(tenantId), first.id);
    expect(await pagesToday()).toBe(1);
    // Text already read is kept: classifying it again reads no page.
    await documents.classify(systemActor(tenantId), first.id);
    expect(await pagesToday()).toBe(1);
    await documents.classify(systemActor(tenantId), second.id);
    expect(await pagesToday()).toBe(2);

    const refused = await documents.classify(systemActor(tenantId), third.id).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringContaining('2 OCR pages') });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(86_400);
    expect(await pagesToday()).toBe(2);
  }, 120_000);
});
