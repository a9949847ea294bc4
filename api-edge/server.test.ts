import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bunExecutable } from '../scripts/stack/bun.ts';

const SERVER_MODULE = fileURLToPath(new URL('./server.ts', import.meta.url));

/** An app with one slow route, served by createEdgeServer on Bun; prints its port. */
const SLOW_APP = `
import { Elysia } from 'elysia';
import { createEdgeServer } from ${JSON.stringify(SERVER_MODULE)};
const app = new Elysia().get('/slow', async () => { await Bun.sleep(13_000); return 'done'; });
const port = await createEdgeServer(app).listen(0, '127.0.0.1');
console.log(port);
`;

describe('the edge server on Bun', () => {
  const child = spawn(bunExecutable(), ['-e', SLOW_APP], { stdio: ['ignore', 'pipe', 'inherit'] });
  afterAll(() => {
    child.kill('SIGKILL');
  });

  it('answers a request that takes longer than Bun\'s default idle timeout of 10 s', async () => {
    const [port] = await once(createInterface({ input: child.stdout! }), 'line');
    const response = await fetch(`http://127.0.0.1:${port}/slow`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('done');
  }, 30_000);
});
