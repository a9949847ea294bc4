import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createTemporalWorkflows } from '../../control-plane/temporal/temporal-workflows.ts';
import { ensureTemporalCli, ensureTemporalDevServer, ensureSearchAttributes, PLATFORM_SEARCH_ATTRIBUTES, runTemporalCli, clientFlags } from '../../scripts/stack/temporal.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { killProcessGroup, startWorkerProcess } from '../harness/process-group.ts';
import { until } from '../harness/until.ts';

const intake = (stack: TestStack, name: string, reviewMs: number) =>
  stack.request('POST', `${V3}/orchestrate/workflows/project-intake/execute`, {
    as: ADMIN,
    body: { input: { name, budget: 250, reviewMs, metadata: { durability: true } }, async: true },
  });

describe('orchestrate durability on a real Temporal server', () => {
  const stacks: TestStack[] = [];
  const workers: ChildProcess[] = [];
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.exitCode === null) killProcessGroup(worker);
  });
  afterAll(async () => {
    for (const stack of stacks) await stack.close();
  });

  it('completes exactly once after its worker is killed in the middle of an execution', async () => {
    const stack = await startTestStack({ worker: false });
    stacks.push(stack);
    const first = startWorkerProcess(stack);
    workers.push(first);
    const name = `Durable ${randomUUID()}`;
    const started = await intake(stack, name, 4_000);
    expect(started.status).toBe(202);
    const execution = (id = started.body.id) => stack.request('GET', `${V3}/orchestrate/executions/${id}`, { as: ADMIN });

    await until(execution, (r) => r.body.steps[1].state === 'running');
    killProcessGroup(first);
    const second = startWorkerProcess(stack);
    workers.push(second);

    const done = await until(execution, (r) => r.body.state !== 'running', 90_000);
    expect(done.body.state).toBe('completed');
    expect(done.body.steps.map((s: any) => s.state)).toEqual(['completed', 'completed', 'completed']);
    const records = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${encodeURIComponent(name)}`, { as: ADMIN });
    expect(records.body.total).toBe(1);
    expect(done.body.output.items.map((r: any) => r.id)).toEqual([records.body.data[0].id]);
  }, 180_000);

  it('cancels during a step: the execution ends cancelled and later steps never run', async () => {
    const stack = await startTestStack();
    stacks.push(stack);
    const name = `Cancelled ${randomUUID()}`;
    const started = await intake(stack, name, 60_000);
    const execution = () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN });
    await until(execution, (r) => r.body.steps[1].state === 'running');

    const cancel = await stack.request('POST', `${V3}/orchestrate/executions/${started.body.id}/cancel`, { as: ADMIN });
    expect(cancel.status).toBe(204);
    expect(cancel.body).toBeUndefined();
    const done = await until(execution, (r) => r.body.state !== 'running');
    expect(done.body.state).toBe('cancelled');
    expect(done.body.steps.map((s: any) => s.state)).toEqual(['completed', 'cancelled', 'cancelled']);
    expect(done.body.output).toBeUndefined();

    const workflows = createTemporalWorkflows(stack.temporal);
    try {
      expect(await workflows.status(`exec-${started.body.id}`)).toBe('cancelled');
    } finally {
      await workflows.close();
    }
    const again = await stack.request('POST', `${V3}/orchestrate/executions/${started.body.id}/cancel`, { as: ADMIN });
    expect(again.status).toBe(204);
    expect((await execution()).body.state).toBe('cancelled');
  }, 120_000);

  it('keeps execution history across a restart of the Temporal server, with the tenant search attributes', async () => {
    const cli = await ensureTemporalCli();
    const server = await ensureTemporalDevServer({ name: 'temporal-restart-check', port: 27249, cli });
    try {
      await ensureSearchAttributes({ cli, address: server.address, attributes: PLATFORM_SEARCH_ATTRIBUTES });
      const stack = await startTestStack({ temporal: { address: server.address, namespace: server.namespace } });
      stacks.push(stack);
      const run = await stack.request('POST', `${V3}/orchestrate/workflows/active-projects/execute`, { as: ADMIN, body: {} });
      expect(run.status).toBe(200);
      const me = await stack.request('GET', `${V3}/users/me`, { as: ADMIN });

      await server.stop();
      const restarted = await ensureTemporalDevServer({ name: 'temporal-restart-check', port: 27249, cli });
      expect(restarted.pid).not.toBe(server.pid);

      const described = JSON.parse(
        await runTemporalCli(cli, ['workflow', 'describe', '--workflow-id', `exec-${run.body.id}`, '-o', 'json', ...clientFlags(restarted.address)]),
      );
      expect(described.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_COMPLETED');
      const listed = await runTemporalCli(cli, [
        'workflow',
        'list',
        '--query',
        `TenantId = "${me.body.tenantId}" AND WorkflowKey = "active-projects" AND WorkflowId = "exec-${run.body.id}"`,
        '-o',
        'json',
        ...clientFlags(restarted.address),
      ]);
      expect(listed).toContain(`exec-${run.body.id}`);
      const api = await stack.request('GET', `${V3}/orchestrate/executions/${run.body.id}`, { as: ADMIN });
      expect(api.body.state).toBe('completed');
    } finally {
      const current = await ensureTemporalDevServer({ name: 'temporal-restart-check', port: 27249, cli });
      await current.stop();
    }
  }, 180_000);
});
