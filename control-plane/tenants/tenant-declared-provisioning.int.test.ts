import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runStatuses } from '../../test/harness/temporal-runs.ts';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { createIdentityService } from '../identity/identity.service.ts';
import { createOutbox } from '../outbox/outbox.service.ts';
import { createTemporalWorkflows } from '../temporal/temporal-workflows.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { NOT_ACCEPTED } from './tenant-lifecycle.ts';
import { createTenantsDeclared, type TenantsDeclared } from './tenants.declared.ts';
import { finishProvisioning, insertTenant } from './tenants.repo.ts';

/**
 * A declared tenant's provisioning starts through the outbox, once: declaring a tenant that is
 * provisioning again starts no second run, and a tenant that an earlier version left `failed`
 * because the engine refused its first start is reopened and provisioned. No worker polls the
 * task queue, so each run stays open for the test to count.
 */
describe('provisioning of a declared tenant', () => {
  let db: Db;
  let tenants: TenantsDeclared;
  let workflows: ReturnType<typeof createTemporalWorkflows>;
  let client: Client;
  const temporal = { address: inject('temporalAddress'), namespace: inject('temporalNamespace'), taskQueue: `test-${randomUUID()}` };
  const opened: string[] = [];
  beforeAll(async () => {
    db = createDb(inject('databaseUrl'));
    workflows = createTemporalWorkflows(temporal);
    const outbox = createOutbox({ db, workflows, log: () => {} });
    tenants = createTenantsDeclared({ db, workflows, outbox, identity: createIdentityService({ db }) });
    client = new Client({ connection: await Connection.connect({ address: temporal.address }), namespace: temporal.namespace });
  });
  afterAll(async () => {
    for (const workflowId of opened) await client.workflow.getHandle(workflowId).terminate('test over').catch(() => undefined);
    await client.connection.close();
    await workflows.close();
    await db.close();
  });

  const listRuns = (workflowId: string) => runStatuses(client, workflowId);
  /** The runs of `workflowId` once the server's listing shows one (it follows starts shortly). */
  const runsOf = (workflowId: string) => until(() => listRuns(workflowId), (runs) => runs.length > 0, 10_000);
  const waiting = (workflowId: string) => db.system((tx) => tx`select 1 from workflow_outbox where workflow_id = ${workflowId}`);
  const declaration = (slug: string) => ({ slug, name: slug, domains: [], usecase: 'generic' as const, starterTemplate: 'blank-vertical-template', homeRegion: 'eu' as const });

  it('starts one run for a new declared tenant, however often it is declared again', async () => {
    const slug = `declared-${randomUUID().slice(0, 8)}`;
    const created = await tenants.declare(declaration(slug));
    expect(created.status).toBe('provisioning');
    const workflowId = PROVISION_TENANT.workflowId(created.id);
    opened.push(workflowId);
    expect(await runsOf(workflowId)).toEqual(['RUNNING']);
    expect(await waiting(workflowId)).toHaveLength(0);

    for (let i = 0; i < 2; i++) expect((await tenants.declare(declaration(slug))).status).toBe('provisioning');
    expect(await runsOf(workflowId)).toEqual(['RUNNING']);
    expect(await waiting(workflowId)).toHaveLength(0);
  });

  it('reopens and provisions a tenant an earlier version left failed when the engine refused its first start', async () => {
    const slug = `refused-${randomUUID().slice(0, 8)}`;
    const tenant = await db.system(async (tx) => {
      const row = await insertTenant(tx, { ...declaration(slug), parentId: null });
      await finishProvisioning(tx, row.id, 'failed', NOT_ACCEPTED);
      return row;
    });
    const workflowId = PROVISION_TENANT.workflowId(tenant.id);
    opened.push(workflowId);
    expect(await listRuns(workflowId)).toEqual([]);

    const declared = await tenants.declare(declaration(slug));
    expect(declared).toMatchObject({ id: tenant.id, status: 'provisioning', statusReason: null });
    expect(await runsOf(workflowId)).toEqual(['RUNNING']);
    expect(await waiting(workflowId)).toHaveLength(0);
  });
});
