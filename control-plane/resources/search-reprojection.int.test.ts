import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { until } from '../../test/harness/until.ts';
import { createDatabase, dropDatabase } from '../../scripts/stack/postgres.ts';
import { migrate } from '../app/migrate.ts';
import { createDb, type Db } from '../db/client.ts';
import { findObjectTypeByName } from '../object-types/object-types.repo.ts';
import { reprojectionRequests } from '../object-types/reprojection-requests.ts';
import { createSearchSources } from '../search/search-sources.ts';
import { createSearchReprojection, type SearchReprojection } from './search-reprojection.ts';

/**
 * The start-up backfill of search projections (record 0181) as processes see it: a request that
 * another process holds is left to it, and taken over once that process's claim lapses. In a
 * database of its own: a request covers every tenant of its database.
 */
describe('search reprojection: one process at a time, taken over when its claim lapses', () => {
  const databaseName = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const adminUrl = Object.assign(new URL(inject('databaseUrl')), { pathname: '/postgres' }).toString();
  let db: Db;
  const started: SearchReprojection[] = [];

  /** One process's backfill, with a claim of `leaseMs`. */
  function backfillProcess(leaseMs: number): SearchReprojection {
    const sources = createSearchSources({ db, embedder: undefined, vectorStore: async () => undefined, kickBacklog: () => {}, log: () => {} });
    const backfill = createSearchReprojection({ db, requests: reprojectionRequests(db), findType: findObjectTypeByName, searchIndex: sources.resourceIndex, leaseMs, log: () => {} });
    started.push(backfill);
    return backfill;
  }

  beforeAll(async () => {
    const url = await createDatabase(adminUrl, databaseName);
    await migrate(url);
    db = createDb(url, { tenantDatabaseUrl: Object.assign(new URL(inject('tenantDatabaseUrl')), { pathname: `/${databaseName}` }).toString() });
  });
  afterAll(async () => {
    for (const backfill of started) await backfill.stop();
    await db?.close();
    await dropDatabase(adminUrl, databaseName);
  });

  it('leaves a claimed request to its process, and takes it over once the claim has lapsed', async () => {
    const tenantId = await insertActiveTenant(db.sql, `reproject-${randomBytes(3).toString('hex')}`);
    await db.sql`
      insert into resources (tenant_id, type, data)
      select ${tenantId}::uuid, 'project', jsonb_build_object('name', 'Bridge ' || n, 'description', 'Inspect the cables of span ' || n)
      from generate_series(1, 20) n`;
    const projected = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from search_chunks where tenant_id = ${tenantId}::uuid`)[0]!.n;
    // A request held by a process that stopped: its claim lapses in a second and a half.
    await db.sql`
      update object_types set search_reprojection_requested_at = now(), search_reprojection_lease_until = now() + interval '1.5 seconds'
       where tenant_id is null and key = 'project'`;

    expect(await backfillProcess(500).resume()).toEqual([]);
    expect(await projected()).toBe(0);

    // The process that found it claimed looks again once a claim could have lapsed, and does it.
    await until(projected, (n) => n === 20, 30_000);
    await until(async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from object_types where search_reprojection_requested_at is not null`)[0]!.n, (n) => n === 0, 30_000);
    // Done: a later start has nothing to do.
    expect(await backfillProcess(500).resume()).toEqual([]);
    expect(await projected()).toBe(20);
  });
});
