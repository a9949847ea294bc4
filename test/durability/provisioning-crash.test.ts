import type { ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { killProcessGroup, startWorkerProcess } from '../harness/process-group.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture } from '../harness/tenant-fixture.ts';
import { runStatuses } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

/** Enough resources that projecting them for search takes a while. */
const RESOURCES = 4_000;

/**
 * The worker that runs a tenant's storage provisioning (`provisionStorage`: PostgreSQL, document
 * store, blob area, search projection) is killed by process group while the workflow is under way;
 * a new worker finishes it. Every backend ends `ready` once, with nothing made twice or left over:
 * one document collection, one blob area marker, one projection per resource.
 */
describe('storage provisioning after its worker is killed', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const workers: ChildProcess[] = [];
  let stack: TestStack | undefined;
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.exitCode === null) killProcessGroup(worker);
  });
  afterAll(async () => {
    await stack?.close();
    await sql.end();
  });

  it('converges to every backend ready with no duplicate or orphaned storage', async () => {
    const tenant = await createTenantFixture(sql, 'provcrash', { plan: 'team' });
    await sql`
      insert into resources (tenant_id, type, data)
      select ${tenant.id}::uuid, 'project', jsonb_build_object('name', 'Project ' || i, 'status', 'active', 'owner', 'Owner ' || (i % 97))
      from generate_series(1, ${RESOURCES}) as i`;
    stack = await startTestStack({ worker: false, devUsers: [...DEV_USERS, tenant.admin] });
    workers.push(startWorkerProcess(stack));

    const provisioned = stack.request('POST', `/v4/data/resources/${tenant.id}/storage/provision`, { as: tenant.admin.email, body: { backend: 'all' } });
    const rows = () => sql<{ backend: string; status: string }[]>`select backend, status from tenant_storage where tenant_id = ${tenant.id}::uuid`;
    // Under way: provisioning begun, and not every backend ready yet.
    const atKill = await until(rows, (r) => r.length === 4 && r.some((row) => row.status !== 'ready') && r.some((row) => row.status === 'ready'), 120_000);
    killProcessGroup(workers[0]!);
    const killedAt = Date.now();
    const [{ count: projectedAtKill }] = (await sql`select count(*)::int as count from search_projections where tenant_id = ${tenant.id}::uuid`) as unknown as [{ count: number }];
    workers.push(startWorkerProcess(stack));

    const answer = await provisioned;
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    const done = await until(rows, (r) => r.length === 4 && r.every((row) => row.status === 'ready'), 180_000);
    process.stderr.write(
      `[provisioning-crash] killed with ${JSON.stringify(atKill)} and ${projectedAtKill} of ${RESOURCES} projections; every backend ready ${Date.now() - killedAt} ms after the kill\n`,
    );
    expect(done.map((r) => r.backend).sort()).toEqual(['blob', 'documentdb', 'postgresql', 'search']);

    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      // The run closes just after its last step recorded the last backend ready.
      expect(await until(() => runStatuses(client, `tenant-${tenant.id}-storage`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
    } finally {
      await connection.close();
    }

    // Nothing made twice, nothing left over.
    expect(await sql`select name from docstore_collections where tenant_id = ${tenant.id}::uuid`).toEqual([{ name: 'default' }]);
    const [projections] = await sql<{ total: number; distinct: number }[]>`
      select count(*)::int as total, count(distinct source_id)::int as distinct from search_projections where tenant_id = ${tenant.id}::uuid`;
    expect(projections).toEqual({ total: RESOURCES, distinct: RESOURCES });
    expect(await readdir(join(stack.blobRoot, 'tenants', tenant.id), { recursive: true })).toEqual(['.svc-area.json']);
    const invalid = await sql`
      select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid
      where not i.indisvalid and c.relname in (select index_name from tenant_storage_indexes where tenant_id = ${tenant.id}::uuid)`;
    expect(invalid).toEqual([]);
  }, 360_000);
});
