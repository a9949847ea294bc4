import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { buildListStatements } from '../../control-plane/resources/list-statements.ts';
import { TENANT_ID, WORKFLOW_KEY } from '../../control-plane/temporal/temporal-workflows.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * v4 storage: routing and status, doctor, provisioning through the `provisionStorage` workflow,
 * and index reconciliation from object type metadata. Each run works on tenants of its own, so
 * the in-process and HTTP-link runs of this file never share a workflow id or an index.
 */
describe('v4 storage', () => {
  const suffix = randomBytes(4).toString('hex');
  const user = (name: string, tenant: string) => ({ sub: randomUUID(), email: `storage-${name}-${suffix}@storage.test`, name: `Storage ${name}`, tenant });
  const slugA = `storage-a-${suffix}`;
  const slugB = `storage-b-${suffix}`;
  const slugC = `storage-c-${suffix}`;
  const adminA = user('admin-a', slugA);
  const memberA = user('member-a', slugA);
  const adminB = user('admin-b', slugB);
  const gadget = `Gadget_${suffix}`;
  const sql = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
  let stack: TestStack;
  let tenantA: string;
  let tenantB: string;
  let tenantC: string;

  async function createTenant(slug: string): Promise<string> {
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      await sql`insert into roles (tenant_id, name, permissions) values (${tenant!.id}::uuid, ${name}, ${permissions as string[]})`;
    }
    return tenant!.id;
  }

  async function addMember(tenantId: string, email: string, roles: string[]): Promise<void> {
    const [row] = await sql<{ id: string }[]>`
      insert into users (email, name) values (${email}, ${email}) on conflict (lower(email)) do update set name = excluded.name returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${tenantId}::uuid, ${row!.id}::uuid, ${roles})`;
  }

  const storage = (tenantId: string, path = '') => `/v4/data/resources/${tenantId}/storage${path}`;
  const provision = (tenantId: string, body?: unknown, as = adminA.email) => stack.request('POST', storage(tenantId, '/provision'), { as, body });
  const syncSchema = (tenantId: string, body?: unknown, as = adminA.email) => stack.request('POST', storage(tenantId, '/sync-schema'), { as, body });
  const doctor = (tenantId: string, as = adminA.email) => stack.request('GET', storage(tenantId, '/doctor'), { as });

  async function createProject(tenantId: string, data: Record<string, unknown>): Promise<string> {
    const created = await stack.request('POST', `${V3}/resources/project`, { as: adminA.email, headers: { 'x-tenant-id': tenantId }, body: data });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }

  async function blobFiles(tenantId: string): Promise<Array<{ path: string; mtimeMs: number }>> {
    const dir = join(stack.blobRoot, 'tenants', tenantId);
    const files = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
    const found = [];
    for (const file of files.sort()) {
      const info = await stat(join(dir, file));
      if (info.isFile()) found.push({ path: file, mtimeMs: info.mtimeMs });
    }
    return found;
  }

  /** Everything provisioning may touch for a tenant, as stored (catalog, rows, files). */
  async function snapshot(tenantId: string) {
    return {
      storage: await sql`select backend, status, location, error, provisioned_at, updated_at from tenant_storage where tenant_id = ${tenantId}::uuid order by backend`,
      collections: await sql`select name, created_at from docstore_collections where tenant_id = ${tenantId}::uuid order by name`,
      projections: await sql`
        select source_id::text, object_type, title, body, source_version, projected_at from search_projections
        where tenant_id = ${tenantId}::uuid order by source_id`,
      claims: await sql`select index_name, object_type, field, created_at from tenant_storage_indexes where tenant_id = ${tenantId}::uuid order by index_name`,
      indexes: await sql`
        select c.relname, pg_get_indexdef(c.oid) as definition, i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid
        where c.relname in (select index_name from tenant_storage_indexes where tenant_id = ${tenantId}::uuid)
           or i.indrelid in ('search_projections'::regclass, 'docstore_documents'::regclass, 'docstore_collections'::regclass, 'tenant_storage'::regclass)
        order by c.relname`,
      policies: await sql`
        select tablename, policyname, qual from pg_policies
        where tablename in ('tenant_storage', 'tenant_storage_indexes', 'docstore_collections', 'docstore_documents', 'search_projections', 'resources')
        order by tablename, policyname`,
      blobs: await blobFiles(tenantId),
    };
  }

  beforeAll(async () => {
    tenantA = await createTenant(slugA);
    tenantB = await createTenant(slugB);
    tenantC = await createTenant(slugC);
    await addMember(tenantA, adminA.email, ['admin', 'tenant-admin']);
    await addMember(tenantC, adminA.email, ['tenant-admin']);
    await addMember(tenantA, memberA.email, ['member']);
    await addMember(tenantB, adminB.email, ['admin', 'tenant-admin']);
    stack = await startTestStack({ devUsers: [...DEV_USERS, adminA, memberA, adminB] });
    await createProject(tenantA, { name: 'Searchable Apollo', status: 'active', owner: 'Margaret Hamilton' });
    await createProject(tenantA, { name: 'Searchable Gemini', status: 'planned' });
  });
  afterAll(async () => {
    await stack?.close();
    await sql.end();
  });

  it('reports every backend not provisioned, with its routing, before provisioning', async () => {
    const response = await stack.request('GET', storage(tenantA), { as: adminA.email });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ tenantId: tenantA, ready: false, workflow: { id: `tenant-${tenantA}-storage`, status: null } });
    expect(response.body.backends.map((b: any) => [b.backend, b.status])).toEqual([
      ['postgresql', 'not_provisioned'],
      ['documentdb', 'not_provisioned'],
      ['blob', 'not_provisioned'],
      ['search', 'not_provisioned'],
    ]);
    const [postgresql, documentdb, blob, search] = response.body.backends;
    expect(postgresql.location).toMatchObject({ store: 'postgresql', schema: 'public', isolation: 'row-level-security' });
    expect(postgresql.location.objects).toEqual(expect.arrayContaining(['resources', 'object_types', 'tenant_storage']));
    expect(postgresql.location.objects).not.toContain('search_projections');
    expect(documentdb.location).toMatchObject({ store: 'postgresql', objects: ['docstore_collections', 'docstore_documents'] });
    expect(blob.location).toEqual({ store: 'local-directory', prefix: `tenants/${tenantA}/`, isolation: 'key-prefix' });
    expect(search.location).toMatchObject({ store: 'postgresql', objects: ['search_projections', 'search_projections_tsv'] });
  });

  it('diagnoses an unprovisioned tenant with warnings and hints', async () => {
    const response = await doctor(tenantA);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.result).toBe('warn');
    const check = (backend: string, name: string) => response.body.checks.find((c: any) => c.backend === backend && c.name === name);
    for (const backend of ['postgresql', 'documentdb', 'blob', 'search']) {
      expect(check(backend, 'status')).toMatchObject({ result: 'warn', message: 'not provisioned' });
      expect(check(backend, 'status').hint).toContain('/storage/provision');
    }
    expect(check('postgresql', 'row-level-security').result).toBe('ok');
    expect(check('postgresql', 'app-role').result).toBe('ok');
    // The run's tenant login (tests on a given DATABASE_URL without TENANT_DATABASE_URL log in as its owner, and get the warning).
    const login = decodeURIComponent(new URL(inject('tenantDatabaseUrl')).username);
    expect(check('postgresql', 'tenant-login')).toMatchObject(
      inject('tenantDatabaseUrl') === inject('databaseUrl')
        ? { result: 'warn', hint: expect.stringContaining('TENANT_DATABASE_URL') }
        : { result: 'ok', message: `tenant connections log in as ${login}, which cannot leave row-level security` },
    );
    expect(check('documentdb', 'reachable').result).toBe('ok');
    expect(check('documentdb', 'default-collection').result).toBe('warn');
    expect(check('blob', 'area').result).toBe('warn');
    expect(check('blob', 'writable')).toMatchObject({ result: 'ok', hint: null });
    expect(check('search', 'fulltext-index').result).toBe('ok');
    expect(check('search', 'projection')).toMatchObject({ result: 'warn', message: '2 resource(s) not projected' });
    for (const c of response.body.checks) expect(c.result === 'ok' ? c.hint === null : typeof c.hint === 'string' && c.hint.length > 0).toBe(true);
    expect(response.body.summary.ok + response.body.summary.warn + response.body.summary.fail).toBe(response.body.checks.length);
    expect(await blobFiles(tenantA)).toEqual([]);
  });

  let planned: any[];

  it('lists the changes of a dry run without making them', async () => {
    const before = await snapshot(tenantA);
    const response = await provision(tenantA, { dryRun: true });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ tenantId: tenantA, backend: 'all', dryRun: true, rebuildSearch: false, workflowId: null, state: 'planned', error: null });
    planned = response.body.changes;
    expect(planned.map((c: any) => [c.backend, c.action, c.object])).toEqual([
      ['postgresql', 'record', 'routing'],
      ['documentdb', 'create', 'collection'],
      ['documentdb', 'record', 'routing'],
      ['blob', 'create', 'area'],
      ['blob', 'record', 'routing'],
      ['search', 'create', 'projection'],
      ['search', 'record', 'routing'],
    ]);
    expect(planned.find((c: any) => c.backend === 'search' && c.action === 'create').count).toBe(2);
    expect(response.body.storage.ready).toBe(false);
    expect(await snapshot(tenantA)).toEqual(before);

    // A flag in the query string is obeyed too, never dropped: a dry run stays one.
    const byQuery = await stack.request('POST', storage(tenantA, '/provision?dryRun=true&backend=blob'), { as: adminA.email });
    expect(byQuery.status, JSON.stringify(byQuery.body)).toBe(200);
    expect(byQuery.body).toMatchObject({ backend: 'blob', dryRun: true, state: 'planned', workflowId: null });
    const syncByQuery = await stack.request('POST', storage(tenantA, '/sync-schema?dryRun=true'), { as: adminA.email });
    expect(syncByQuery.body).toMatchObject({ dryRun: true });
    for (const [query, body, field] of [['?dryRun=yes', undefined, 'dry_run'], ['?colour=blue', undefined, 'colour'], ['?dryRun=true&__proto__=x', undefined, '__proto__'], ['?dryRun=true&dryRun=false', undefined, 'dry_run'], ['?dryRun=true', { dryRun: false }, 'dry_run']] as const) {
      const refused = await stack.request('POST', storage(tenantA, `/provision${query}`), { as: adminA.email, body });
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    // A dry run whose body is not sent as JSON is refused, not run for real with the defaults.
    const asBytes = await stack.request('POST', storage(tenantA, '/provision'), { as: adminA.email, rawBody: '{"dryRun":true}', headers: { 'content-type': 'application/octet-stream' } });
    expect(asBytes.status).toBe(400);
    expect(asBytes.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: '(body)' } });
    expect(await snapshot(tenantA)).toEqual(before);
  });

  it('provisions every backend through the provisionStorage workflow, making exactly the planned changes', async () => {
    const response = await provision(tenantA);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ tenantId: tenantA, backend: 'all', dryRun: false, workflowId: `tenant-${tenantA}-storage`, state: 'completed', error: null });
    expect(response.body.changes).toEqual(planned);
    expect(response.body.storage.ready).toBe(true);
    expect(response.body.storage.backends.every((b: any) => b.status === 'ready' && b.error === null && b.provisionedAt)).toBe(true);
    expect(response.body.storage.workflow).toEqual({ id: `tenant-${tenantA}-storage`, status: 'completed' });

    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({ connection, namespace: inject('temporalNamespace') });
      const run = await client.workflow.getHandle(`tenant-${tenantA}-storage`).describe();
      expect(run.type).toBe('provisionStorage');
      expect(run.typedSearchAttributes.get(TENANT_ID)).toBe(tenantA);
      expect(run.typedSearchAttributes.get(WORKFLOW_KEY)).toBe('provision-storage');
      // Storage of a tenant that may hold data: every step a queued activity, each with its own timeout.
      const { events } = await client.workflow.getHandle(`tenant-${tenantA}-storage`).fetchHistory();
      const scheduled = events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(scheduled).toEqual(['beginStorageProvisioning', ...Array(4).fill('ensureStorageBackend')]);
    } finally {
      await connection.close();
    }

    expect((await blobFiles(tenantA)).map((f) => f.path)).toEqual(['.svc-area.json']);
    const [collection] = await sql`select name from docstore_collections where tenant_id = ${tenantA}::uuid`;
    expect(collection).toEqual({ name: 'default' });
    const hits = await sql`
      select title from search_projections where tenant_id = ${tenantA}::uuid and tsv @@ plainto_tsquery('simple', 'hamilton')`;
    expect(hits).toEqual([{ title: 'Searchable Apollo' }]);
  });

  it('is idempotent: a second run changes nothing, and the doctor says the same before and after', async () => {
    const before = await snapshot(tenantA);
    const doctorBefore = await doctor(tenantA);
    expect(doctorBefore.body.result, JSON.stringify(doctorBefore.body.checks.filter((c: any) => c.result !== 'ok'))).toBe('ok');
    const second = await provision(tenantA, { backend: 'all' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ state: 'completed', changes: [] });
    const dry = await provision(tenantA, { dryRun: true });
    expect(dry.body.changes).toEqual([]);
    expect(await snapshot(tenantA)).toEqual(before);
    expect((await doctor(tenantA)).body).toEqual(doctorBefore.body);
  });

  it('keeps the search projection current, and rebuilds it on request', async () => {
    const id = await createProject(tenantA, { name: 'Searchable Mercury', status: 'active' });
    const stale = await doctor(tenantA);
    expect(stale.body.checks.find((c: any) => c.name === 'projection')).toMatchObject({ result: 'warn', message: '1 resource(s) not projected' });
    const refreshed = await provision(tenantA, { backend: 'search' });
    expect(refreshed.body.changes).toEqual([
      { backend: 'search', action: 'create', object: 'projection', name: 'search_projections', count: 1, description: 'project 1 resource(s) not yet searchable' },
    ]);
    const [row] = await sql`select title from search_projections where tenant_id = ${tenantA}::uuid and source_id = ${id}::uuid`;
    expect(row).toEqual({ title: 'Searchable Mercury' });

    const plannedRebuild = await provision(tenantA, { backend: 'search', rebuildSearch: true, dryRun: true });
    expect(plannedRebuild.body.changes).toMatchObject([{ backend: 'search', action: 'rebuild', count: 3 }]);
    const rebuilt = await provision(tenantA, { backend: 'search', rebuildSearch: true });
    expect(rebuilt.body).toMatchObject({ state: 'completed', rebuildSearch: true, changes: [{ backend: 'search', action: 'rebuild', count: 3 }] });
    const [projected] = await sql<{ count: number }[]>`select count(*)::int as count from search_projections where tenant_id = ${tenantA}::uuid`;
    expect(projected!.count).toBe(3);
  });

  it('normalises mongodb to documentdb and validates its input', async () => {
    const mongo = await provision(tenantA, { backend: 'mongodb', dryRun: true });
    expect(mongo.status).toBe(200);
    expect(mongo.body).toMatchObject({ backend: 'documentdb', changes: [] });
    const sync = await syncSchema(tenantA, { backend: 'mongodb', dryRun: true });
    expect(sync.body).toMatchObject({ backend: 'documentdb', changes: [], skipped: [] });

    const bad = await provision(tenantA, { backend: 'oracle' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'backend' } });
    const misspelt = await provision(tenantA, { dryrun: true });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.error.details.field).toBe('dryrun');
    expect((await provision(tenantA, { dryRun: 'yes' })).status).toBe(400);
    expect((await provision(tenantA, [1, 2])).status).toBe(400);
    expect((await syncSchema(tenantA, { backend: 'all', dryRun: 1 })).status).toBe(400);
  });

  it('reconciles expression indexes from x-indexed fields, usable by the resource engine', async () => {
    const schema = (indexed: { price: boolean }) => ({
      type: 'object',
      properties: {
        sku: { type: 'string', maxLength: 64, 'x-indexed': true },
        price: { type: 'number', ...(indexed.price ? { 'x-indexed': true } : {}) },
        tags: { type: 'array', items: { type: 'string' }, 'x-indexed': true },
        launchedAt: { type: 'string', format: 'date-time', 'x-indexed': true },
        notes: { type: 'string', 'x-indexed': true },
        specs: { type: 'object', properties: { weight: { type: 'number', 'x-indexed': true } } },
      },
    });
    await sql`insert into object_types (tenant_id, key, name, schema) values (${tenantA}::uuid, ${gadget}, ${gadget}, ${sql.json(schema({ price: true }))})`;
    await sql`
      insert into resources (tenant_id, type, data)
      select ${tenantA}::uuid, ${gadget}, jsonb_build_object('sku', 'SKU-' || n, 'price', n, 'tags', jsonb_build_array('t' || (n % 7)), 'specs', jsonb_build_object('weight', n % 50))
      from generate_series(1, 400) n`;
    await sql`analyze resources`;

    const dry = await syncSchema(tenantA, { dryRun: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    // Every declarable kind is indexed: a date-time by its value, text without a maxLength by hash.
    expect(dry.body.changes.map((c: any) => [c.action, c.objectType, c.field])).toEqual([
      ['create', gadget, 'launchedAt'],
      ['create', gadget, 'notes'],
      ['create', gadget, 'price'],
      ['create', gadget, 'sku'],
      ['create', gadget, 'specs.weight'],
      ['create', gadget, 'tags'],
    ]);
    expect(dry.body.skipped).toEqual([]);
    const names = dry.body.changes.map((c: any) => c.name);
    expect(await sql`select indexname from pg_indexes where indexname in ${sql(names)}`).toEqual([]);

    const applied = await syncSchema(tenantA, {});
    expect(applied.body.changes).toEqual(dry.body.changes);
    const indexes = await sql<{ indexname: string; indexdef: string }[]>`select indexname, indexdef from pg_indexes where indexname in ${sql(names)} order by indexname`;
    expect(indexes).toHaveLength(6);
    expect(indexes.every((i) => i.indexdef.includes(`WHERE ((tenant_id = '${tenantA}'::uuid) AND (type = '${gadget}'::text))`))).toBe(true);
    expect(indexes.filter((i) => i.indexdef.includes('USING gin'))).toHaveLength(1);
    expect(indexes.filter((i) => i.indexdef.includes('USING hash'))).toHaveLength(1);
    expect((await syncSchema(tenantA, {})).body.changes).toEqual([]);
    expect((await doctor(tenantA)).body.checks.find((c: any) => c.name === 'indexes')).toMatchObject({ result: 'ok', message: '6 index(es) declared by object types are in place' });

    // The plans of the resource engine's own statements, as the tenant under row-level security.
    // `leakproof` first runs the doctor's hint in the same transaction, which is rolled back.
    const indexOf = (field: string) => dry.body.changes.find((c: any) => c.field === field).name as string;
    const plan = async (options: Parameters<typeof buildListStatements>[1], { leakproof = false } = {}) => {
      const statements = buildListStatements(tenantA, options, schema({ price: true }));
      let text = '';
      await sql
        .begin(async (tx) => {
          if (leakproof) await tx`alter function pg_catalog.jsonb_extract_path_text(jsonb, text[]) leakproof`;
          await tx`select set_config('svc.tenant_id', ${tenantA}, true), set_config('role', 'svc_app', true)`;
          const rows = await tx.unsafe(`explain ${statements.page.text}`, statements.page.values as never[]);
          text = rows.map((r) => r['QUERY PLAN']).join('\n');
          throw new Error('roll back');
        })
        .catch((error: Error) => {
          if (error.message !== 'roll back') throw error;
        });
      return text;
    };
    const bySku = await plan({ type: gadget, filter: {}, sort: 'sku', limit: 10 });
    expect(bySku).toMatch(new RegExp(`Index Scan using ${indexOf('sku')}`));
    const byPrice = await plan({ type: gadget, filter: {}, sort: '-price', limit: 5 });
    expect(byPrice).toMatch(new RegExp(`Index Scan Backward using ${indexOf('price')}`));
    // The migrations, run as a superuser here, marked the text accessor LEAKPROOF (the doctor's hint elsewhere).
    const filters = (await doctor(tenantA)).body.checks.find((c: any) => c.name === 'index-filters');
    expect(filters).toMatchObject({ result: 'ok', message: expect.stringContaining('can use their indexes under row-level security') });
    const filtered = await plan({ type: gadget, filter: { sku: 'SKU-17' }, limit: 10 });
    expect(filtered).toMatch(new RegExp(`Index Scan (on|using) ${indexOf('sku')}[\\s\\S]*Index Cond: .*data #>> '\\{sku\\}'::text\\[\\]\\) = 'SKU-17'`));

    await sql`update object_types set schema = ${sql.json(schema({ price: false }))}, version = version + 1 where tenant_id = ${tenantA}::uuid and key = ${gadget}`;
    const plannedDrop = await syncSchema(tenantA, { backend: 'postgresql', dryRun: true });
    expect(plannedDrop.body.changes.map((c: any) => [c.action, c.field])).toEqual([['drop', 'price']]);
    const dropped = await syncSchema(tenantA, { backend: 'postgresql' });
    expect(dropped.body.changes).toEqual(plannedDrop.body.changes);
    expect(await sql`select 1 from pg_indexes where indexname = ${plannedDrop.body.changes[0].name}`).toEqual([]);
    expect((await syncSchema(tenantA, {})).body.changes).toEqual([]);

    expect((await syncSchema(tenantA, { backend: 'blob' })).body).toMatchObject({ backend: 'blob', changes: [], skipped: [] });
    expect((await syncSchema(tenantB, { dryRun: true }, adminB.email)).body.changes).toEqual([]);
  });

  it("serves a v4 list and its cursor pages from the fields a type declares in indexes", async () => {
    const name = `Part${suffix}`;
    const created = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${tenantA}`, {
      as: adminA.email,
      body: { name, schema: { type: 'object', properties: { weight: { type: 'number' }, code: { type: 'string', maxLength: 40 } } }, indexes: ['weight', 'code'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.key;
    await sql`
      insert into resources (tenant_id, type, data)
      select ${tenantA}::uuid, ${key}, jsonb_build_object('weight', n, 'code', 'C-' || n) from generate_series(1, 2000) n`;

    // Declared means built: in the background, with no further call; the type says when it is done.
    expect(created.body.indexBuild.state).toMatch(/^(building|ready)$/);
    const typeOf = async () => (await stack.request('GET', `/v4/data/resources/object-types?tenant_id=${tenantA}`, { as: adminA.email })).body.data.find((t: any) => t.key === key);
    const built = await until(typeOf, (type) => type.indexBuild?.state === 'ready');
    expect(built.indexBuild).toEqual({ state: 'ready', pending: [], skipped: [], error: null });
    const claims = await sql<{ name: string; field: string }[]>`
      select index_name as name, field from tenant_storage_indexes where tenant_id = ${tenantA}::uuid and object_type = ${key} order by field`;
    expect(claims.map((c) => c.field)).toEqual(['code', 'weight']);
    expect((await syncSchema(tenantA, { backend: 'postgresql', dryRun: true })).body.changes.filter((c: any) => c.objectType === key)).toEqual([]);
    await sql`analyze resources`;
    const weightIndex = claims.find((c) => c.field === 'weight')!.name;
    expect((await doctor(tenantA)).body.checks.find((c: any) => c.name === 'indexes').result).toBe('ok');
    // Each indexed expression has statistics over the table, analysed (the planner ignores a partial index's own):
    // a filter on the field is estimated from them, not guessed.
    const expressions = await sql<{ name: string; analysed: boolean }[]>`
      select s.stxname as name, exists (select 1 from pg_stats_ext_exprs e where e.statistics_name = s.stxname) as analysed
      from pg_statistic_ext s where pg_get_statisticsobjdef_expressions(s.oid)::text like any(${["%'{weight}'%", "%'{code}'%"]})`;
    expect(expressions.map((e) => e.analysed)).toEqual([true, true]);

    // The v4 list's own statements, planned as the tenant under row-level security.
    const explain = async (text: string, values: unknown[]) => {
      let plan = '';
      await sql
        .begin(async (tx) => {
          await tx`select set_config('svc.tenant_id', ${tenantA}, true), set_config('role', 'svc_app', true)`;
          plan = (await tx.unsafe(`explain ${text}`, values as never[])).map((r) => r['QUERY PLAN']).join('\n');
          throw new Error('roll back');
        })
        .catch((error: Error) => {
          if (error.message !== 'roll back') throw error;
        });
      return plan;
    };
    const first = buildListStatements(tenantA, { type: key, filter: {}, sort: '-weight', limit: 20 }, created.body.schema);
    expect(await explain(first.page.text, first.page.values)).toMatch(new RegExp(`Index Scan Backward using ${weightIndex}`));

    const page = await stack.request('GET', `/v4/data/resources/${tenantA}/${key}?sort=-weight&limit=20`, { as: adminA.email });
    expect(page.body.data.map((r: any) => r.data.weight)).toEqual(Array.from({ length: 20 }, (_, i) => 2000 - i));
    // 2000 match: past the bound the total is estimated, unless the client asks for an exact count.
    expect(page.body.totalExact).toBe(false);
    expect(page.body.total).toBeGreaterThan(1000);
    expect(page.headers.get('content-range')).toBe('0-19/*');
    const counted = await stack.request('GET', `/v4/data/resources/${tenantA}/${key}?sort=-weight&limit=20&count=exact`, { as: adminA.email });
    expect([counted.body.total, counted.body.totalExact, counted.headers.get('content-range')]).toEqual([2000, undefined, '0-19/2000']);
    const next = buildListStatements(tenantA, { type: key, filter: {}, sort: '-weight', limit: 20, cursor: page.body.nextCursor }, created.body.schema);
    expect(await explain(next.page.text, next.page.values)).toMatch(new RegExp(`Index Scan Backward using ${weightIndex}`));
    const second = await stack.request('GET', `/v4/data/resources/${tenantA}/${key}?sort=-weight&limit=20&cursor=${encodeURIComponent(page.body.nextCursor)}`, { as: adminA.email });
    expect(second.body.data[0].data.weight).toBe(1980);

    // Tenant B's type of the same name lets `code` be any length: A's index holds none of B's rows,
    // so B's long values are stored as ever (a shared index would refuse them as too long to index).
    const other = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${tenantB}`, {
      as: adminB.email,
      body: { name, schema: { type: 'object', properties: { code: { type: 'string' } } } },
    });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    expect(other.body.key).toBe(key);
    const longCode = randomBytes(6000).toString('hex');
    const stored = await stack.request('POST', `/v4/data/resources/${tenantB}/${key}`, { as: adminB.email, body: { data: { code: longCode } } });
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    const [definition] = await sql<{ indexdef: string }[]>`select indexdef from pg_indexes where indexname = ${weightIndex}`;
    expect(definition!.indexdef).toContain(`WHERE ((tenant_id = '${tenantA}'::uuid) AND (type = '${key}'::text))`);
    expect((await stack.request('GET', `/v4/data/resources/${tenantB}/${key}/${stored.body.id}`, { as: adminB.email })).body.data.code).toBe(longCode);
  });

  /**
   * Declares `type` with one indexed `field`, holds that index's build lock as another build would,
   * and starts a storage run of postgresql, whose step then waits for the lock; once the step has
   * heartbeated, `body` gets the run, its workflow and the lock's holder. Everything is released after.
   */
  async function whileStepWaitsOnIndexLock(
    type: string,
    field: string,
    body: (run: { index: string; lock: string; holder: postgres.ReservedSql; handle: WorkflowHandle; running: ReturnType<typeof provision> }) => Promise<void>,
  ): Promise<void> {
    const schema = { type: 'object', properties: { [field]: { type: 'string', maxLength: 32, 'x-indexed': true } } };
    await sql`insert into object_types (tenant_id, key, name, schema) values (${tenantA}::uuid, ${type}, ${type}, ${sql.json(schema)})`;
    const planned = await syncSchema(tenantA, { backend: 'postgresql', dryRun: true });
    expect(planned.body.changes.map((c: any) => [c.action, c.objectType, c.field])).toEqual([['create', type, field]]);
    const index: string = planned.body.changes[0].name;
    const lock = `svc-storage-index:${index}`;

    const holder = await sql.reserve();
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    let running: ReturnType<typeof provision> | undefined;
    try {
      await holder`select pg_advisory_lock(hashtext(${lock}))`;
      running = provision(tenantA, { backend: 'postgresql' });
      const handle = new Client({ connection, namespace: inject('temporalNamespace') }).workflow.getHandle(`tenant-${tenantA}-storage`);
      await until(
        async () => (await handle.describe()).raw.pendingActivities ?? [],
        (activities) => activities.some((a) => a.activityType?.name === 'ensureStorageBackend' && a.lastHeartbeatTime),
      );
      await body({ index, lock, holder, handle, running });
    } finally {
      await holder`select pg_advisory_unlock_all()`;
      holder.release();
      await running?.catch(() => undefined);
      await connection.close();
    }
  }

  it('heartbeats a backend step while it waits, under a 20 s heartbeat timeout (after which the server retries a step whose worker went away)', async () => {
    const widget = `Widget_${suffix}`;
    await whileStepWaitsOnIndexLock(widget, 'code', async ({ lock, holder, handle, running }) => {
      await holder`select pg_advisory_unlock(hashtext(${lock}))`;
      const done = await running;
      expect(done.body).toMatchObject({ state: 'completed', error: null });
      expect(done.body.changes.map((c: any) => [c.action, c.objectType, c.field])).toEqual([['create', widget, 'code']]);
      // Only the backend steps heartbeat; recording progress is one statement.
      const { events } = await handle.fetchHistory();
      const timeouts = events!.flatMap((e) => {
        const scheduled = e.activityTaskScheduledEventAttributes;
        return scheduled ? [[scheduled.activityType?.name, Number(scheduled.heartbeatTimeout?.seconds ?? 0)]] : [];
      });
      expect(timeouts).toEqual([
        ['beginStorageProvisioning', 0],
        ['ensureStorageBackend', 20],
      ]);
    });
  });

  it('cancelling a run stops its waiting step in PostgreSQL, and records the cancellation once the step has stopped', async () => {
    const gizmo = `Gizmo_${suffix}`;
    // The step's own wait for the index lock, as PostgreSQL shows it.
    const stepWaiting = () =>
      sql`select pid from pg_stat_activity where application_name = 'svc-platform' and wait_event = 'advisory' and query like 'select pg_advisory_lock%'`;

    await whileStepWaitsOnIndexLock(gizmo, 'serial', async ({ index, handle, running }) => {
      await until(stepWaiting, (rows) => rows.length === 1);
      await handle.cancel();
      // The lock is still held: only the cancellation can have ended the wait.
      await until(stepWaiting, (rows) => rows.length === 0, 30_000);
      const done = await running;
      expect(done.body).toMatchObject({ state: 'cancelled' });
      expect(done.body.storage.backends.find((b: any) => b.backend === 'postgresql')).toMatchObject({ status: 'failed', error: 'provisioning was cancelled' });
      const { events } = await handle.fetchHistory();
      const order = events!.flatMap((e) => {
        if (e.activityTaskCanceledEventAttributes) return ['ensureStorageBackend cancelled'];
        const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
        return scheduled ? [`${scheduled} scheduled`] : [];
      });
      // The failure is recorded after the step stopped, so the step cannot record the backend ready after it.
      expect(order).toEqual(['beginStorageProvisioning scheduled', 'ensureStorageBackend scheduled', 'ensureStorageBackend cancelled', 'failStorageProvisioning scheduled']);
      expect(await sql`select 1 from pg_indexes where indexname = ${index}`).toEqual([]);
    });

    const again = await provision(tenantA, { backend: 'postgresql' });
    expect(again.body).toMatchObject({ state: 'completed', error: null });
    // The index is built, and the backend, recorded failed by the cancellation, is recorded ready again.
    expect(again.body.changes.map((c: any) => [c.action, c.object, c.objectType ?? null])).toEqual([
      ['create', 'index', gizmo],
      ['record', 'routing', null],
    ]);
    expect(again.body.storage.backends.find((b: any) => b.backend === 'postgresql')).toMatchObject({ status: 'ready' });
  });

  it('records a failed backend with its reason, and recovers on the next run', async () => {
    await mkdir(join(stack.blobRoot, 'tenants'), { recursive: true });
    await writeFile(join(stack.blobRoot, 'tenants', tenantC), 'not a directory');
    const failed = await provision(tenantC);
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.state).toBe('failed');
    expect(failed.body.error).toMatch(/blob provisioning failed/);
    const byBackend = Object.fromEntries(failed.body.storage.backends.map((b: any) => [b.backend, b]));
    expect(byBackend.postgresql.status).toBe('ready');
    expect(byBackend.documentdb.status).toBe('ready');
    expect(byBackend.blob.status).toBe('failed');
    expect(byBackend.blob.error).toMatch(/EEXIST: file already exists, mkdir/);
    expect(byBackend.search).toMatchObject({ status: 'failed', error: 'not provisioned: blob failed first' });
    expect(failed.body.storage.workflow.status).toBe('failed');

    const diagnosis = await doctor(tenantC);
    expect(diagnosis.body.result).toBe('fail');
    expect(diagnosis.body.checks.find((c: any) => c.backend === 'blob' && c.name === 'writable')).toMatchObject({ result: 'fail' });
    expect(diagnosis.body.checks.find((c: any) => c.backend === 'blob' && c.name === 'status').hint).toMatch(/fix the cause/);

    await rm(join(stack.blobRoot, 'tenants', tenantC));
    const recovered = await provision(tenantC);
    expect(recovered.body.state).toBe('completed');
    expect(recovered.body.changes.map((c: any) => [c.backend, c.action])).toEqual([
      ['blob', 'create'],
      ['blob', 'record'],
      ['search', 'record'],
    ]);
    expect(recovered.body.storage.ready).toBe(true);
    expect((await doctor(tenantC)).body.result).toBe('ok');
  });

  it('needs tenants.manage to provision, sync or diagnose; members may read the status', async () => {
    expect((await stack.request('GET', storage(tenantA), { as: memberA.email })).status).toBe(200);
    for (const response of [
      await provision(tenantA, { dryRun: true }, memberA.email),
      await syncSchema(tenantA, { dryRun: true }, memberA.email),
      await doctor(tenantA, memberA.email),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('FORBIDDEN');
    }
  });

  it('keeps each tenant’s storage to itself', async () => {
    for (const [as, other] of [
      [adminA.email, tenantB],
      [adminB.email, tenantA],
      [adminA.email, randomUUID()],
    ] as const) {
      for (const response of [
        await stack.request('GET', storage(other), { as }),
        await doctor(other, as),
        await provision(other, {}, as),
        await syncSchema(other, {}, as),
      ]) {
        expect(response.status).toBe(403);
        expect(response.body.error.code).toBe('FORBIDDEN');
      }
    }
    expect(await sql`select 1 from tenant_storage where tenant_id = ${tenantB}::uuid`).toEqual([]);
    const seenByB = await sql.begin(async (tx) => {
      await tx`select set_config('svc.tenant_id', ${tenantB}, true), set_config('role', 'svc_app', true)`;
      return tx`
        select (select count(*)::int from tenant_storage where tenant_id = ${tenantA}::uuid) as storage,
               (select count(*)::int from tenant_storage_indexes) as claims,
               (select count(*)::int from docstore_collections where tenant_id = ${tenantA}::uuid) as collections,
               (select count(*)::int from search_projections) as projections`;
    });
    expect(seenByB).toEqual([{ storage: 0, claims: 0, collections: 0, projections: 0 }]);
    const forB = await stack.request('GET', storage(tenantB), { as: adminB.email });
    expect(forB.body.backends.every((b: any) => b.status === 'not_provisioned')).toBe(true);
  });
});
