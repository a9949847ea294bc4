import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { createTemporalWorkflows } from '../temporal/temporal-workflows.ts';
import { PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { insertTenant } from '../tenants/tenants.repo.ts';
import { createOutbox } from './outbox.service.ts';

/**
 * Two processes dispatch one task queue's outbox: one reaches Temporal, the other cannot (its
 * address refuses connections). The one that cannot gives back what it claimed at its first failed
 * start and rests, so the starts it would have held go to the other instead of waiting out its failures.
 * No worker polls the task queue, so each run stays open for the test to count.
 */
describe('the outbox of a process that cannot reach the workflow engine', () => {
  let db: Db;
  let client: Client;
  const taskQueue = `test-${randomUUID()}`;
  const temporal = { address: inject('temporalAddress'), namespace: inject('temporalNamespace'), taskQueue };
  const healthyEngine = createTemporalWorkflows(temporal);
  // Nothing listens on port 1: every connection is refused at once.
  const brokenEngine = createTemporalWorkflows({ ...temporal, address: '127.0.0.1:1' });
  const opened: string[] = [];
  beforeAll(async () => {
    db = createDb(inject('databaseUrl'));
    client = new Client({ connection: await Connection.connect({ address: temporal.address }), namespace: temporal.namespace });
  });
  afterAll(async () => {
    for (const workflowId of opened) await client.workflow.getHandle(workflowId).terminate('test over').catch(() => undefined);
    await client.connection.close();
    await healthyEngine.close();
    await brokenEngine.close();
    await db.close();
  });

  it('leaves the starts it cannot make to a process that can, after a failed attempt', async () => {
    const options = { db, graceMs: 0, pollMs: 100, dispatchWaitMs: 0, log: () => {} };
    const failures: string[] = [];
    const broken = createOutbox({ ...options, workflows: brokenEngine, log: (message) => failures.push(message) });
    const healthy = createOutbox({ ...options, workflows: healthyEngine });
    const ids = await db.system(async (tx) => {
      const written: string[] = [];
      for (let i = 0; i < 10; i++) {
        const slug = `outbox-${randomUUID().slice(0, 8)}`;
        const tenant = await insertTenant(tx, { slug, name: slug, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null });
        const workflowId = PROVISION_TENANT.workflowId(tenant.id);
        opened.push(workflowId);
        await broken.enqueue(tx, { workflowType: PROVISION_TENANT.type, workflowId, workflowKey: PROVISION_TENANT.key, args: [{ tenantId: tenant.id }], tenantId: tenant.id });
        written.push(workflowId);
      }
      return written;
    });
    const waiting = () => db.system((tx) => tx<{ workflowId: string; attempts: number }[]>`select workflow_id as "workflowId", attempts from workflow_outbox where workflow_id = any(${ids})`);

    // The process that cannot reach Temporal looks first, and goes on looking.
    const firstLook = broken.dispatchDue();
    broken.start();
    healthy.start();
    try {
      const left = await until(waiting, (rows) => rows.length === 0, 30_000).catch(async () => waiting());
      expect(left).toEqual([]);
      await firstLook;
    } finally {
      await broken.stop();
      await healthy.stop();
    }
    // It failed a start, rested, tried one row, rested longer: it never held the others back.
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.length).toBeLessThanOrEqual(3);
    // Every start was made once, by the process that could.
    for (const workflowId of ids) expect(await client.workflow.getHandle(workflowId).describe()).toMatchObject({ status: { name: 'RUNNING' } });
  }, 60_000);
});
