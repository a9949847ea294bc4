import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, V3, type TestStack } from '../harness/stack.ts';
import { startStackBehindTemporalProxy } from '../harness/temporal-proxy.ts';
import { startToxiproxy, type Proxy, type Toxic, type Toxiproxy } from '../harness/toxiproxy.ts';
import { until } from '../harness/until.ts';

/**
 * The platform's processes reach Temporal through toxiproxy, which slows the path (latency, then a
 * bandwidth limit) without cutting it: executions started through the API still run to the end,
 * once each, only later. The cuts (blackhole, reset) are in tenant-creation-faults and
 * document-index-faults.
 */
describe('executions while the path to Temporal is slow', () => {
  let toxiproxy: Toxiproxy;
  let proxy: Proxy;
  let stack: TestStack;

  beforeAll(async () => {
    toxiproxy = await startToxiproxy();
    ({ proxy, stack } = await startStackBehindTemporalProxy(toxiproxy));
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await toxiproxy?.close();
  }, 60_000);

  const slowPaths: Array<[string, Toxic]> = [
    ['200 ms of latency each way', { type: 'latency', attributes: { latency: 200 } }],
    ['a 16 KB/s bandwidth limit', { type: 'bandwidth', attributes: { rate: 16 } }],
  ];
  for (const [what, toxic] of slowPaths) {
    it(`runs an execution to the end through ${what}`, async () => {
      await proxy.add('slow', toxic);
      try {
        const started = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, {
          as: ADMIN,
          body: { input: { status: 'active', question: 'Which project has the budget 900?' }, async: true },
        });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        const asked = Date.now();
        const read = () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN });
        const done = await until(read, (r) => r.status === 200 && !['pending', 'running'].includes(r.body.state), 120_000);
        process.stderr.write(`[temporal-slow-path] ${what}: execution ${done.body.state} ${Date.now() - asked} ms after its start\n`);
        expect(done.body).toMatchObject({ id: started.body.id, state: 'completed' });
        expect(done.body.steps.map((s: { stepId: string; state: string }) => [s.stepId, s.state])).toEqual([
          ['find-projects', 'completed'],
          ['answer', 'completed'],
        ]);
      } finally {
        await proxy.remove('slow');
      }
    }, 180_000);
  }
});
