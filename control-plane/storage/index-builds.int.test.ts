import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../test/harness/until.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { insertTenant } from '../tenants/tenants.repo.ts';
import type { BackendDeps } from './backends/backend.ts';
import { planIndexes } from './backends/postgresql.ts';
import { createIndexBuilds } from './index-builds.ts';
import { insertIndexClaim, physicalIndexes } from './storage.repo.ts';

/**
 * Declared indexes are built in the background of the process that took the change. A process that
 * stops before or during a build leaves the work undone; the next process to start finishes it
 * (`resume`), without anyone changing the type again or running sync-schema.
 */
describe('index builds after a restart', () => {
  let db: Db;
  let deps: BackendDeps;

  beforeAll(() => {
    db = createDb(inject('databaseUrl'));
    deps = { db, blobs: createLocalDirectoryBlobStore(mkdtempSync(join(tmpdir(), 'builds-'))), database: async () => ({ database: 'test', schema: 'public' }) };
  });
  afterAll(() => db.close());

  /** A tenant whose type `crate` declares an index on a number field of this test, written as a committed change is. */
  const tenantDeclaringAnIndex = async () => {
    const slug = `builds-${randomUUID().slice(0, 8)}`;
    const field = `weight_${randomUUID().slice(0, 8)}`;
    const { id } = await db.system((tx) => insertTenant(tx, { slug, name: slug, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null }));
    await db.system((tx) => tx`
      insert into object_types (tenant_id, key, name, schema, indexes)
      values (${id}::uuid, 'crate', 'Crate', ${tx.json({ type: 'object', properties: { [field]: { type: 'number' } } })}, ${tx.json([field])})`);
    await db.system((tx) => tx`insert into resources (tenant_id, type, data) select ${id}::uuid, 'crate', jsonb_build_object(${field}::text, n) from generate_series(1, 200) n`);
    const [spec] = (await planIndexes(deps, id)).creates;
    return { tenantId: id, spec: spec! };
  };
  const indexOf = async (name: string) => (await db.system((tx) => physicalIndexes(tx, [name]))).get(name);

  it('builds a declaration that no build had started', async () => {
    const { tenantId, spec } = await tenantDeclaringAnIndex();
    const restarted = createIndexBuilds(deps);
    expect((await restarted.statuses(tenantId))('crate')).toMatchObject({ state: 'pending', pending: [`crate.${spec.field}`] });

    expect(await restarted.resume()).toContain(tenantId);
    expect(await indexOf(spec.name)).toEqual({ valid: true });
    expect((await restarted.statuses(tenantId))('crate')).toMatchObject({ state: 'ready', pending: [] });
    // Nothing left to do: a second start builds nothing for this tenant.
    expect(await createIndexBuilds(deps).resume()).not.toContain(tenantId);
  });

  it('rebuilds an index whose build was cut off half way, leaving it invalid', async () => {
    const { tenantId, spec } = await tenantDeclaringAnIndex();
    // The build as a process runs it: the claim, then `create index concurrently`, which waits for an
    // open writing transaction after it has made the (still invalid) index; the process dies there.
    await db.inTenant(tenantId, (tx) => insertIndexClaim(tx, spec));
    const url = inject('databaseUrl');
    const writer = postgres(url, { max: 1, onnotice: () => {} });
    const builder = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const open = await writer.reserve();
      await open`begin`;
      await open`insert into resources (tenant_id, type, data) values (${tenantId}::uuid, 'crate', '{}')`;
      const building = builder.unsafe(spec.definition).catch((error: unknown) => error);
      await until(() => indexOf(spec.name), (index) => index?.valid === false);
      await db.sql`select pg_terminate_backend(pid) from pg_stat_activity where query = ${spec.definition} and pid <> pg_backend_pid()`;
      expect(await building).toBeInstanceOf(Error);
      await open`rollback`;
      open.release();
    } finally {
      await writer.end();
      await builder.end({ timeout: 1 });
    }
    expect(await indexOf(spec.name)).toEqual({ valid: false });

    const restarted = createIndexBuilds(deps);
    expect((await restarted.statuses(tenantId))('crate').state).toBe('pending');
    expect(await restarted.resume()).toContain(tenantId);
    expect(await indexOf(spec.name)).toEqual({ valid: true });
    expect((await restarted.statuses(tenantId))('crate').state).toBe('ready');
  });
});
