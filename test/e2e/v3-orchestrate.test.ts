import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

describe('v3 orchestrate', () => {
  let stack: TestStack;
  const marker = randomUUID();

  beforeAll(async () => {
    stack = await startTestStack();
    for (const [name, status, budget] of [
      ['Orchestrated Alpha', 'active', 900],
      ['Orchestrated Beta', 'completed', 300],
    ] as const) {
      const created = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name, status, budget, metadata: { marker } } });
      expect(created.status).toBe(201);
    }
  });
  afterAll(() => stack?.close());

  it('lists the tenant’s workflows with typed steps', async () => {
    const response = await stack.request('GET', `${V3}/orchestrate/workflows`, { as: ADMIN });
    expect(response.status).toBe(200);
    const briefing = response.body.data.find((w: any) => w.id === 'project-briefing');
    expect(briefing).toMatchObject({ name: 'Project briefing', version: '1' });
    expect(briefing.steps).toEqual([
      { id: 'find-projects', name: 'Find projects', type: 'resource_query' },
      { id: 'answer', name: 'Answer the question', type: 'ai_chat' },
    ]);
  });

  it('runs an execution synchronously: 200 with output and timed steps', async () => {
    const response = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, {
      as: ADMIN,
      body: { input: { status: 'active', question: 'Which orchestrated project has the budget 900?' }, metadata: { source: 'test' } },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ workflowId: 'project-briefing', state: 'completed', input: { status: 'active' } });
    expect(response.body.output.answer).toContain('budget: 900');
    expect(response.body.steps.map((s: any) => [s.stepId, s.state])).toEqual([
      ['find-projects', 'completed'],
      ['answer', 'completed'],
    ]);
    const span = Date.parse(response.body.completedAt) - Date.parse(response.body.startedAt);
    expect(span).toBeGreaterThanOrEqual(0);
    // Each step's duration (ms) is measured inside the execution's span.
    for (const step of response.body.steps) {
      expect(Number.isInteger(step.duration)).toBe(true);
      expect(step.duration).toBeGreaterThanOrEqual(0);
      expect(step.duration).toBeLessThanOrEqual(span);
    }
  });

  it('answers a synchronous execute that outlasts its 10 s wait with 202 and the running record', async () => {
    const response = await stack.request('POST', `${V3}/orchestrate/workflows/project-intake/execute`, {
      as: ADMIN,
      body: { input: { name: `Long intake ${marker}`, budget: 100, reviewMs: 20_000, metadata: { marker } } },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toMatchObject({ workflowId: 'project-intake', state: 'running' });
    const cancelled = await stack.request('POST', `${V3}/orchestrate/executions/${response.body.id}/cancel`, { as: ADMIN });
    expect(cancelled.status).toBe(204);
  }, 30_000);

  it('runs an execution asynchronously: 202 running at once, then completed', async () => {
    const started = await stack.request('POST', `${V3}/orchestrate/workflows/active-projects/execute`, { as: ADMIN, body: { input: {}, async: true } });
    expect(started.status).toBe(202);
    expect(started.body.state).toBe('running');
    expect(started.body.output).toBeUndefined();
    const done = await until(
      () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: ADMIN }),
      (r) => r.body.state !== 'running',
    );
    expect(done.body.state).toBe('completed');
    expect(done.body.output.items.map((r: any) => r.data.name)).toContain('Orchestrated Alpha');
    expect(done.body.output.items.every((r: any) => r.data.status === 'active')).toBe(true);

    const listed = await stack.request('GET', `${V3}/orchestrate/executions?workflowId=active-projects&state=completed&limit=100`, { as: ADMIN });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: any) => e.id)).toContain(started.body.id);
    expect(Object.keys(listed.body.data[0]).sort()).toEqual(['completedAt', 'id', 'startedAt', 'state', 'workflowId']);
  });

  it('names an execution in its paths `executionId`, as the API contract does', async () => {
    const document = (await (await fetch(`${stack.url}${V3}/openapi.json`)).json()) as any;
    for (const [path, method] of [
      ['/orchestrate/executions/{executionId}', 'get'],
      ['/orchestrate/executions/{executionId}/cancel', 'post'],
    ] as const) {
      const names = document.paths[path]?.[method]?.parameters?.filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(names, path).toEqual(['executionId']);
    }
  });

  it('keeps executions inside their tenant', async () => {
    const run = await stack.request('POST', `${V3}/orchestrate/workflows/active-projects/execute`, { as: ADMIN, body: {} });
    expect((await stack.request('GET', `${V3}/orchestrate/executions/${run.body.id}`, { as: GLOBEX_ADMIN })).status).toBe(404);
    expect((await stack.request('POST', `${V3}/orchestrate/executions/${run.body.id}/cancel`, { as: GLOBEX_ADMIN })).status).toBe(404);
    const listed = await stack.request('GET', `${V3}/orchestrate/executions?limit=100`, { as: GLOBEX_ADMIN });
    expect(listed.body.data.map((e: any) => e.id)).not.toContain(run.body.id);
  });

  it('answers 404 for unknown workflows and executions, 400 for bad input', async () => {
    expect((await stack.request('POST', `${V3}/orchestrate/workflows/nope/execute`, { as: ADMIN, body: {} })).status).toBe(404);
    expect((await stack.request('GET', `${V3}/orchestrate/executions/${randomUUID()}`, { as: ADMIN })).status).toBe(404);
    const bad = await stack.request('POST', `${V3}/orchestrate/workflows/active-projects/execute`, { as: ADMIN, body: { input: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('input');
    const badState = await stack.request('GET', `${V3}/orchestrate/executions?state=bogus`, { as: ADMIN });
    expect(badState.status).toBe(400);
  });
});
