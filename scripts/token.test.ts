import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, V3, type TestStack } from '../test/harness/stack.ts';

const run = promisify(execFile);
const tsx = 'node_modules/.bin/tsx';

describe('npm run -s token', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack?.close());

  it('prints only an access token that the API accepts', async () => {
    const { stdout } = await run(tsx, ['scripts/token.ts', 'member@acme.test'], { env: { ...process.env, SVC_URL: stack.url } });
    const token = stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    const me = await stack.request('GET', `${V3}/users/me`, { token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe('member@acme.test');
  });

  it('fails clearly for an unknown user and for an unreachable platform', async () => {
    await expect(run(tsx, ['scripts/token.ts', 'nobody@acme.test'], { env: { ...process.env, SVC_URL: stack.url } })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('nobody@acme.test'),
    });
    await expect(run(tsx, ['scripts/token.ts', 'admin@acme.test'], { env: { ...process.env, SVC_URL: 'http://127.0.0.1:9' } })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('npm start'),
    });
  });
});
