import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PROVISION_TENANT } from '../../control-plane/temporal/workflow-contract.ts';
import type { TestStack } from '../harness/stack.ts';
import { startStackBehindTemporalProxy } from '../harness/temporal-proxy.ts';
import { BLACKHOLE, startToxiproxy, type Toxiproxy } from '../harness/toxiproxy.ts';
import { runStatusesAt } from '../harness/temporal-runs.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * A tenant created while the network path to Temporal is blackholed (toxiproxy) waits for its
 * provisioning start in the workflow outbox; deleting it removes that start in the delete's
 * transaction, so that no provisioning run starts once Temporal is back
 * (docs/decisions/0180-deleted-tenants-leave-the-outbox.md).
 */
describe('deleting a tenant whose provisioning waits for Temporal', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack | undefined;
  let toxiproxy: Toxiproxy | undefined;
  afterAll(async () => {
    await stack?.close();
    await toxiproxy?.close();
    await sql.end();
  }, 60_000);

  it('removes its waiting start with it: no provisioning run once Temporal answers again', async () => {
    toxiproxy = await startToxiproxy();
    const behind = await startStackBehindTemporalProxy(toxiproxy);
    const { temporal, proxy } = behind;
    stack = behind.stack;

    await proxy.add('fault', BLACKHOLE);
    const slug = `deleted-${randomUUID().slice(0, 8)}`;
    const created = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: 'Deleted while waiting', slug, homeRegion: 'eu' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ slug, status: 'provisioning' });
    const id: string = created.body.id;
    const waiting = () => sql<{ workflowId: string }[]>`select workflow_id as "workflowId" from workflow_outbox where tenant_id = ${id}::uuid`;
    expect(await waiting()).toEqual([{ workflowId: PROVISION_TENANT.workflowId(id) }]);

    const deleted = await stack.request('POST', `/v4/platform/tenants/${id}/delete`, { as: PLATFORM_ADMIN });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
    expect(await waiting()).toEqual([]);
    expect(await sql`select status from tenants where id = ${id}::uuid`).toEqual([{ status: 'deleted' }]);

    // Temporal answers again: the stack's dispatcher (every 2 s) and its backoff (1 s after the
    // failed start) would have started a start still waiting well within this time.
    await proxy.remove('fault');
    await sleep(12_000);
    expect(await runStatusesAt(temporal, PROVISION_TENANT.workflowId(id))).toEqual([]);
    expect(await waiting()).toEqual([]);
  }, 120_000);
});
