import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

describe('v3 smoke', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack?.close());

  it('creates and reads a project', async () => {
    const created = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: 'Apollo', budget: 10, metadata: { priority: 2 } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const got = await stack.request('GET', `${V3}/resources/project/${created.body.id}`, { as: ADMIN });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ name: 'Apollo', budget: 10, type: 'project', metadata: { priority: 2 } });
  });
});
