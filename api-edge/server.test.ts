import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bunExecutable } from '../scripts/stack/bun.ts';

const SERVER_MODULE = fileURLToPath(new URL('./server.ts', import.meta.url));

/** An app served by createEdgeServer on Bun: a slow route and one that echoes its URL; prints its port. */
const APP = `
import { Elysia } from 'elysia';
import { createEdgeServer } from ${JSON.stringify(SERVER_MODULE)};
const app = new Elysia()
  .get('/slow', async () => { await Bun.sleep(13_000); return 'done'; })
  .get('/url', ({ request }) => new URL(request.url).pathname);
const port = await createEdgeServer(app).listen(0, '127.0.0.1');
console.log(port);
`;

/** Sends `raw` on a new connection and resolves with everything the server answers before it closes. */
async function exchange(port: number, raw: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.write(raw);
  await once(socket, 'close');
  return answer;
}

describe('the edge server on Bun', () => {
  let child: ChildProcess;
  let port: number;
  beforeAll(async () => {
    child = spawn(bunExecutable(), ['-e', APP], { stdio: ['ignore', 'pipe', 'inherit'] });
    [port] = (await once(createInterface({ input: child.stdout! }), 'line')).map(Number) as [number];
  });
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it("answers a request that takes longer than Bun's default idle timeout of 10 s", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/slow`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('done');
  }, 30_000);

  it('serves a request without a Host header (HTTP/1.0), whose URL Bun gives as a bare path', async () => {
    const answer = await exchange(port, 'GET /url HTTP/1.0\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer.endsWith('\r\n\r\n/url')).toBe(true);
  });
});
