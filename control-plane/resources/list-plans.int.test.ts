import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant, insertUser } from '../../test/harness/tenant-fixture.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { createObjectTypesService } from '../object-types/object-types.service.ts';
import type { SqlText } from '../query/sql-text.ts';
import { createStorageService } from '../storage/storage.service.ts';
import { buildListStatements, type ListOptions } from './list-statements.ts';
import { EXACT_TOTAL_BOUND } from './list-totals.ts';
import { createResourcesService } from './resources.service.ts';

/**
 * The plans of the resource engine's own list statements, as PostgreSQL makes them for the tenant's
 * login under row-level security with the tenant set: pages walk an index, text filters are index
 * conditions, and totals past a bound are estimated rather than counted.
 */
describe('list plans under row-level security', () => {
  let db: Db;
  let actor: Actor;
  const suite = randomUUID().slice(0, 8);
  const storage = () => createStorageService({ db, blobs: createLocalDirectoryBlobStore(mkdtempSync(join(tmpdir(), 'plans-'))) });
  let builds: ReturnType<typeof storage>['indexBuilds'];
  let objectTypes: ReturnType<typeof createObjectTypesService>;
  let resources: ReturnType<typeof createResourcesService>;

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    builds = storage().indexBuilds;
    objectTypes = createObjectTypesService({ db, indexBuilds: builds });
    resources = createResourcesService({ db, objectTypes });
    const slug = `plans-${suite}`;
    const tenantId = await insertActiveTenant(db.sql, slug);
    const userId = await insertUser(db.sql, `plans-${suite}`);
    actor = { userId, email: 'plans@example.test', tenantId, tenantSlug: slug, roles: ['admin'], permissions: new Set() };
    // A list of a few thousand projects, among as many of other tenants whose budgets are small or
    // missing (as other test files write them): the planner's figures for the shared table are then
    // not this tenant's, and the pages must walk the index all the same.
    await db.sql`
      insert into resources (tenant_id, type, data, created_at)
      select ${tenantId}::uuid, 'project', jsonb_build_object('name', 'Project ' || n, 'status', (array['active', 'completed', 'in-progress'])[1 + n % 3], 'budget', 100 + (n * 7919) % 250000), now() - n * interval '1 minute'
      from generate_series(1, 5000) n`;
    const others = await insertActiveTenant(db.sql, `plans-others-${suite}`);
    await db.sql`
      insert into resources (tenant_id, type, data)
      select ${others}::uuid, 'project', case when n % 2 = 0 then jsonb_build_object('name', 'Other ' || n) else jsonb_build_object('name', 'Other ' || n, 'status', 'active', 'budget', n % 50) end
      from generate_series(1, 5000) n`;
    await analyzeUntilKnown(tenantId, 5000);
  });

  /**
   * Analyzes the shared table until the planner's figures count the tenant's projects. Other test
   * files analyze it too (after their index builds): one that sampled before this file's rows were
   * committed and finished after this file's analyze would leave figures without them.
   */
  async function analyzeUntilKnown(tenantId: string, rows: number) {
    for (let attempt = 0; attempt < 20; attempt++) {
      await db.sql`analyze resources`;
      const [row] = await db.sql<Array<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>>`
        explain (format json) select 1 from resources where tenant_id = ${tenantId}::uuid and type = 'project'`;
      if (row!['QUERY PLAN'][0]!.Plan['Plan Rows'] >= rows / 2) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`the planner's figures never counted the tenant's ${rows} projects`);
  }
  afterAll(() => db?.close());

  /** The plan of a statement, as the tenant. */
  const plan = async (statement: SqlText) =>
    (await db.inTenant(actor.tenantId, (tx) => tx.unsafe<Array<{ 'QUERY PLAN': string }>>(`explain ${statement.text}`, statement.values as never[])))
      .map((row) => row['QUERY PLAN'])
      .join('\n');
  const schemaOf = async (key: string) => (await objectTypes.get(actor, key)).schema;
  const V3_LIST: ListOptions = { type: 'project', filter: { status: 'active', 'budget.gte': '1000' }, sort: '-budget,createdAt', limit: 20 };

  it('walks the built-in project’s budget index for the v3 list sorted by -budget,createdAt, on every page', async () => {
    const schema = await schemaOf('project');
    const first = await plan(buildListStatements(actor.tenantId, V3_LIST, schema).page);
    expect(first).toMatch(/Index Scan Backward using resources_b_project_budget/);
    expect(first).not.toMatch(/Seq Scan|\bSort\b(?! Key)(?<!Incremental Sort)/);
    const page = await resources.list(actor, V3_LIST);
    expect(page.items).toHaveLength(20);
    const next = await plan(buildListStatements(actor.tenantId, { ...V3_LIST, cursor: page.nextCursor! }, schema).page);
    expect(next).toMatch(/Index Scan Backward using resources_b_project_budget/);
  });

  it('starts the cursor page at the cursor: a row comparison, or a bound on the leading key, as the index condition', async () => {
    const schema = await schemaOf('project');
    const cursorPage = async (sort: string) => {
      const first = await resources.list(actor, { type: 'project', filter: {}, sort, limit: 20 });
      return plan(buildListStatements(actor.tenantId, { type: 'project', filter: {}, sort, limit: 20, cursor: first.nextCursor! }, schema).page);
    };
    // Every key ascending and never null: (created_at, id) > (...), a range of the created index.
    expect(await cursorPage('createdAt')).toMatch(/Index Scan using resources_tenant_type_created[\s\S]*Index Cond: .*ROW\(created_at, id\) > ROW\(/);
    // Newest first, ties by id: the bound created_at <= (...) is the range, the rest a filter.
    expect(await cursorPage('-createdAt')).toMatch(/Index Scan Backward using resources_tenant_type_created[\s\S]*Index Cond: .*created_at <= /);
    // A text key descending: its declared index, from the cursor's name down.
    expect(await cursorPage('-name')).toMatch(/Index Scan Backward using resources_b_project_name[\s\S]*Index Cond: .*data #>> '\{name\}'::text\[\]\) <= /);
  });

  it('uses a text filter as an index condition', async () => {
    const statements = buildListStatements(actor.tenantId, { type: 'project', filter: { name: 'Project 17' }, limit: 20 }, await schemaOf('project'));
    expect(await plan(statements.page)).toMatch(/Index Cond: .*data #>> '\{name\}'::text\[\]\) = 'Project 17'/);
    expect(await plan(statements.matching)).toMatch(/Index Cond: .*data #>> '\{name\}'::text\[\]\) = 'Project 17'/);
  });

  it('counts exactly up to the bound, estimates past it, and counts every row when asked', async () => {
    const estimated = await resources.list(actor, V3_LIST);
    expect(estimated.totalExact).toBe(false);
    expect(estimated.total).toBeGreaterThan(EXACT_TOTAL_BOUND);
    expect(estimated.hasMore).toBe(true);
    const exact = await resources.list(actor, { ...V3_LIST, count: 'exact' });
    const [counted] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from resources where tenant_id = ${actor.tenantId}::uuid and type = 'project' and data->>'status' = 'active' and (data->>'budget')::numeric >= 1000`;
    expect(exact).toMatchObject({ total: counted!.n, totalExact: true });
    const few = await resources.list(actor, { ...V3_LIST, filter: { status: 'active', 'budget.gte': '249000' } });
    expect(few.totalExact).toBe(true);
    expect(few.total).toBeLessThanOrEqual(EXACT_TOTAL_BOUND);
    // A write makes the next read count again, bounded as before.
    await resources.create(actor, 'project', { name: 'one more', status: 'active', budget: 249_500 });
    expect((await resources.list(actor, { ...V3_LIST, filter: { status: 'active', 'budget.gte': '249000' } })).total).toBe(few.total + 1);
  });

  it('builds the indexes a type declares in the background, for every kind of field, and serves multi-key sorts and text filters from them', async () => {
    const created = await objectTypes.create(actor, {
      name: `Crate${suite.replace(/\d/g, 'x')}`,
      schema: { type: 'object', properties: { weight: { type: 'number' }, note: { type: 'string' }, shippedOn: { type: 'string', format: 'date' }, code: { type: 'string', maxLength: 20 } } },
      status: 'published',
      indexes: ['weight', 'note', 'shippedOn', 'code'],
      searchFields: [],
      actions: {},
      fileProperties: {},
    });
    expect(created.indexBuild?.state).toMatch(/^(building|ready)$/);
    await builds.settled(actor.tenantId);
    expect((await objectTypes.get(actor, created.key)).indexBuild).toEqual({ state: 'ready', pending: [], skipped: [], error: null });
    // Enough rows that this tenant's projects dominate the shared table's statistics even while
    // other test files have written projects of their own: the planner's figures for this tenant
    // then resemble those of a real tenant with a large list.
    await db.sql`
      insert into resources (tenant_id, type, data)
      select ${actor.tenantId}::uuid, ${created.key}, jsonb_build_object('weight', n % 997, 'note', 'note ' || n, 'code', 'C' || n, 'shippedOn', to_char(date '2024-01-01' + n % 700, 'YYYY-MM-DD'))
      from generate_series(1, 5000) n`;
    await db.sql`analyze resources`;
    const indexOf = async (field: string) =>
      (await db.inTenant(actor.tenantId, (tx) => tx<{ name: string }[]>`select index_name as name from tenant_storage_indexes where object_type = ${created.key} and field = ${field}`))[0]!.name;
    const list = (options: Partial<ListOptions>) => buildListStatements(actor.tenantId, { type: created.key, filter: {}, limit: 20, ...options }, created.schema);

    // Two keys in mixed directions: the index of the first key, its ties sorted as they come.
    expect(await plan(list({ sort: '-weight,createdAt' }).page)).toMatch(new RegExp(`Incremental Sort[\\s\\S]*Index Scan Backward using ${await indexOf('weight')}`));
    expect(await plan(list({ sort: 'weight,-createdAt' }).page)).toMatch(new RegExp(`Incremental Sort[\\s\\S]*Index Scan using ${await indexOf('weight')}`));
    expect(await plan(list({ sort: '-shippedOn' }).page)).toMatch(new RegExp(`Index Scan Backward using ${await indexOf('shippedOn')}`));
    // Text of any length is found by its hash index; bounded text by its btree, both as index conditions.
    expect(await plan(list({ where: { note: 'note 17' } }).page)).toMatch(new RegExp(`Index Scan using ${await indexOf('note')}[\\s\\S]*Index Cond|Bitmap Index Scan on ${await indexOf('note')}`));
    expect(await plan(list({ where: { code: 'C17' } }).matching)).toMatch(/Index Cond: .*data #>> '\{code\}'::text\[\]\) = 'C17'/);

    // A change of the declaration builds (and drops) with no further call.
    const note = await indexOf('note');
    await objectTypes.update(actor, { objectTypeId: created.objectTypeId, changes: { indexes: ['weight', 'shippedOn', 'code'] } });
    await builds.settled(actor.tenantId);
    expect(await db.sql`select 1 from pg_indexes where indexname = ${note}`).toEqual([]);
  });
});
