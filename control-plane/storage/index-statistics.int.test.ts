import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { insertTenant } from '../tenants/tenants.repo.ts';
import { applyIndexes, planIndexes } from './backends/postgresql.ts';
import type { BackendDeps } from './backends/backend.ts';
import { statisticsName } from './indexes.ts';

/** The statistics of an indexed expression live as long as some tenant's index has that expression. */
describe('statistics of indexed expressions', () => {
  let db: Db;
  let deps: BackendDeps;
  // A field of this run only, so that no other test's claims share its expression.
  const field = `weight_${randomUUID().slice(0, 8)}`;
  const expression = `(case when jsonb_typeof(data #> '{${field}}') = 'number' then (data #>> '{${field}}')::numeric end)`;

  beforeAll(() => {
    db = createDb(inject('databaseUrl'));
    deps = { db, blobs: createLocalDirectoryBlobStore(mkdtempSync(join(tmpdir(), 'stats-'))), database: async () => ({ database: 'test', schema: 'public' }) };
  });
  afterAll(() => db.close());

  /** A tenant with a type `crate` holding a number field of this run. */
  const tenant = async () => {
    const slug = `stats-${randomUUID().slice(0, 8)}`;
    const { id } = await db.system((tx) => insertTenant(tx, { slug, name: slug, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null }));
    await db.system((tx) => tx`
      insert into object_types (tenant_id, key, name, schema) values (${id}::uuid, 'crate', 'Crate', ${tx.json({ type: 'object', properties: { [field]: { type: 'number' } } })})`);
    return id;
  };
  /** Declares the field in the type's `indexes`, or not, and syncs the tenant's indexes. */
  const declare = async (tenantId: string, indexed: boolean) => {
    await db.system((tx) => tx`update object_types set indexes = ${tx.json(indexed ? [field] : [])} where tenant_id = ${tenantId}::uuid and key = 'crate'`);
    await applyIndexes(deps, tenantId, await planIndexes(deps, tenantId));
  };
  const statisticsExist = async () =>
    (await db.system((tx) => tx`select 1 from pg_statistic_ext where stxname = ${statisticsName(expression)}`)).length > 0;

  it('are made with the first index of the expression and dropped with the last, whichever tenant holds it', async () => {
    const [a, b] = [await tenant(), await tenant()];
    await declare(a, true);
    expect((await db.inTenant(a, (tx) => tx`select expression from tenant_storage_indexes`)).map((c) => c.expression)).toEqual([expression]);
    expect(await statisticsExist()).toBe(true);
    await declare(b, true);
    await declare(a, false);
    // B's index still has the expression.
    expect(await statisticsExist()).toBe(true);
    await declare(b, false);
    expect(await statisticsExist()).toBe(false);
    // Declared again, they come back.
    await declare(a, true);
    expect(await statisticsExist()).toBe(true);
    await declare(a, false);
    expect(await statisticsExist()).toBe(false);
  });
});
