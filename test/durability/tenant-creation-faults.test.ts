import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { PROVISION_TENANT } from '../../control-plane/temporal/workflow-contract.ts';
import type { TestStack } from '../harness/stack.ts';
import { startStackBehindTemporalProxy } from '../harness/temporal-proxy.ts';
import { PATH_CUTS, startToxiproxy, type Toxiproxy } from '../harness/toxiproxy.ts';
import { runStatusesAt } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * A platform administrator creates a tenant while the network path to Temporal is blackholed or
 * reset (toxiproxy). The tenant and the start of its provisioning commit together: the create
 * answers 201 `provisioning`, a retry of the same slug is the usual 409, and once Temporal is back
 * the tenant becomes `active` with exactly one provisioning run (docs/decisions/0175-tenant-provisioning-outbox.md).
 */
describe('creating a tenant while Temporal is unreachable', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const stacks: TestStack[] = [];
  let toxiproxy: Toxiproxy | undefined;
  afterEach(async () => {
    for (const stack of stacks.splice(0).reverse()) await stack.close();
    await toxiproxy?.close();
    toxiproxy = undefined;
  }, 60_000);
  afterAll(() => sql.end());

  for (const [what, toxic] of PATH_CUTS) {
    it(`answers 201 provisioning while Temporal is ${what}, and provisions the tenant once after`, async () => {
      toxiproxy = await startToxiproxy();
      const { temporal, proxy, stack } = await startStackBehindTemporalProxy(toxiproxy);
      stacks.push(stack);

      await proxy.add('fault', toxic);
      const slug = `down-${randomUUID().slice(0, 8)}`;
      const body = { name: `Temporal ${what}`, slug, homeRegion: 'eu' };
      const asked = Date.now();
      const created = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body });
      const answeredMs = Date.now() - asked;
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ slug, status: 'provisioning' });
      const id: string = created.body.id;

      // The same create again while it provisions: the slug is taken, as for any existing tenant.
      const retried = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body });
      expect(retried.status, JSON.stringify(retried.body)).toBe(409);
      expect(retried.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(slug) });

      const stored = () => sql<{ status: string; reason: string | null }[]>`select status, status_reason as reason from tenants where id = ${id}::uuid`;
      expect(await stored()).toEqual([{ status: 'provisioning', reason: null }]);
      const waiting = () => sql<{ attempts: number }[]>`select attempts from workflow_outbox where workflow_id = ${PROVISION_TENANT.workflowId(id)}`;
      expect(await waiting()).toHaveLength(1);
      await sleep(2_000);
      expect(await stored()).toEqual([{ status: 'provisioning', reason: null }]);
      await proxy.remove('fault');
      const removedAt = Date.now();

      const tenant = () => stack.request('GET', '/v4/identity/tenants', { as: PLATFORM_ADMIN }).then((r) => r.body.data.find((t: { id: string }) => t.id === id));
      const done = await until(tenant, (t) => t?.status !== 'provisioning', 150_000);
      process.stderr.write(`[tenant-creation-faults] Temporal ${what}: create answered in ${answeredMs} ms; tenant active ${Date.now() - removedAt} ms after the fault was removed\n`);
      expect(done).toMatchObject({ slug, status: 'active' });
      // The tenant is marked active by the run's last step; the run itself closes just after.
      const runs = () => runStatusesAt(temporal, PROVISION_TENANT.workflowId(id));
      expect(await until(runs, (statuses) => !statuses.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
      // The start that got through may have answered too late for its caller, who then put the row
      // off for a retry: that retry finds the run started and removes the row.
      expect(await until(waiting, (rows) => rows.length === 0, 60_000)).toHaveLength(0);
    }, 240_000);
  }
});
