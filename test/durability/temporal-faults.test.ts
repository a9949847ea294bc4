import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ensureTemporalCli, ensureTemporalDevServer, ensureSearchAttributes, PLATFORM_SEARCH_ATTRIBUTES, type TemporalDevServer } from '../../scripts/stack/temporal.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { startStackBehindTemporalProxy } from '../harness/temporal-proxy.ts';
import { PATH_CUTS, RESET, startToxiproxy, type Toxiproxy } from '../harness/toxiproxy.ts';
import { runStatusesAt } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

/**
 * Temporal goes away under a running platform: the network path to it is blackholed or reset
 * (toxiproxy), or its process is killed and started again on the same persistence. A write that
 * starts a workflow still answers truthfully (the outbox keeps the start), and every execution
 * runs once when Temporal is back.
 */

/** A dev server of this file's own, so that killing it disturbs no other test. */
const RESTARTED = { name: 'temporal-fault-test', port: 27269 } as const;

const intake = (stack: TestStack, name: string, reviewMs: number) =>
  stack.request('POST', `${V3}/orchestrate/workflows/project-intake/execute`, { as: ADMIN, body: { input: { name, budget: 250, reviewMs }, async: true } });

describe('the platform while Temporal is unreachable or restarted', () => {
  const stacks: TestStack[] = [];
  let toxiproxy: Toxiproxy | undefined;
  afterEach(async () => {
    for (const stack of stacks.splice(0).reverse()) await stack.close();
    await toxiproxy?.close();
    toxiproxy = undefined;
  }, 60_000);

  for (const [what, toxic] of PATH_CUTS) {
    it(`answers an execution truthfully while Temporal is ${what}, and runs it once after`, async () => {
      toxiproxy = await startToxiproxy();
      const { temporal, proxy, stack } = await startStackBehindTemporalProxy(toxiproxy);
      stacks.push(stack);
      expect((await stack.request('GET', `${V3}/users/me`, { as: ADMIN })).status).toBe(200);

      await proxy.add('fault', toxic);
      const name = `Temporal ${what} ${randomUUID()}`;
      const asked = Date.now();
      const started = await intake(stack, name, 100);
      const answeredMs = Date.now() - asked;
      // The execution is on record and its start is kept, whether or not Temporal heard of it.
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body).toMatchObject({ id: expect.any(String), state: 'running' });
      // Read while Temporal cannot be asked: the record as it stands, at once.
      const execution = () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN });
      const readAt = Date.now();
      const during = await execution();
      const readMs = Date.now() - readAt;
      expect(during.status, JSON.stringify(during.body)).toBe(200);
      expect(during.body.state).toBe('running');
      expect(readMs).toBeLessThan(5_000);
      await sleep(2_000);
      await proxy.remove('fault');
      const removedAt = Date.now();

      const done = await until(execution, (r) => r.body.state !== 'running', 120_000);
      const recoveredMs = Date.now() - removedAt;
      process.stderr.write(`[temporal-faults] Temporal ${what}: execute answered in ${answeredMs} ms, a read in ${readMs} ms; completed ${recoveredMs} ms after the fault was removed\n`);
      expect(done.body.state, JSON.stringify(done.body)).toBe('completed');
      expect(await until(() => runStatusesAt(temporal, `exec-${started.body.id}`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
      const records = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${encodeURIComponent(name)}`, { as: ADMIN });
      expect(records.body.total).toBe(1);
    }, 180_000);
  }

  it('answers a cancel 503 with Retry-After while Temporal is reset, and cancels when it is back', async () => {
    toxiproxy = await startToxiproxy();
    const { proxy, stack } = await startStackBehindTemporalProxy(toxiproxy);
    stacks.push(stack);
    const started = await intake(stack, `Temporal cancel ${randomUUID()}`, 60_000);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const execution = () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN });
    await until(execution, (r) => r.body.steps[1].state === 'running');
    const cancel = () => stack.request('POST', `${V3}/orchestrate/executions/${started.body.id}/cancel`, { as: ADMIN });

    await proxy.add('fault', RESET);
    const asked = Date.now();
    const refused = await cancel();
    const refusedMs = Date.now() - asked;
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('workflow engine'), retryAfter: expect.any(Number) });
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect((await execution()).body.state).toBe('running');

    await proxy.remove('fault');
    // As a client does: retried after its Retry-After while the path to Temporal comes back.
    const accepted = await until(cancel, (r) => r.status !== 503, 60_000);
    expect(accepted.status, JSON.stringify(accepted.body)).toBeLessThan(300);
    const done = await until(execution, (r) => r.body.state !== 'running', 60_000);
    process.stderr.write(`[temporal-faults] cancel while Temporal is reset: 503 in ${refusedMs} ms\n`);
    expect(done.body.state).toBe('cancelled');
  }, 180_000);

  describe('its process killed and started again', () => {
    let server: TemporalDevServer | undefined;
    afterAll(async () => {
      await server?.stop();
    }, 60_000);

    it('continues a running execution, which completes once', async () => {
      const cli = await ensureTemporalCli();
      server = await ensureTemporalDevServer({ ...RESTARTED, cli });
      await ensureSearchAttributes({ cli, address: server.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });
      const stack = await startTestStack({ temporal: { address: server.address, namespace: server.namespace } });
      stacks.push(stack);

      const name = `Temporal restart ${randomUUID()}`;
      const started = await intake(stack, name, 4_000);
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const execution = () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN });
      await until(execution, (r) => r.body.steps[1].state === 'running');

      // Killed as a crash kills it: SIGKILL to its process group, no shutdown of its own.
      process.kill(-server.pid, 'SIGKILL');
      const killedAt = Date.now();
      await sleep(1_000);
      server = await ensureTemporalDevServer({ ...RESTARTED, cli });
      const restartedMs = Date.now() - killedAt;

      const done = await until(execution, (r) => r.body.state !== 'running', 120_000);
      process.stderr.write(`[temporal-faults] Temporal killed mid-execution: serving again after ${restartedMs} ms; execution completed ${Date.now() - killedAt} ms after the kill\n`);
      expect(done.body.state, JSON.stringify(done.body)).toBe('completed');
      expect(done.body.steps.map((s: { state: string }) => s.state)).toEqual(['completed', 'completed', 'completed']);
      // The run closes just after its last activity recorded the execution's end.
      expect(await until(() => runStatusesAt(server!, `exec-${started.body.id}`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
      const records = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${encodeURIComponent(name)}`, { as: ADMIN });
      expect(records.body.total).toBe(1);
    }, 240_000);
  });
});
