import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { BLACKHOLE, PATH_CUTS, startToxiproxy, type Proxy, type Toxiproxy } from '../harness/toxiproxy.ts';
import { form } from '../harness/documents.ts';

/**
 * The edge calls the control plane over tRPC's HTTP link through toxiproxy, which blackholes or
 * resets that path: every request answers 503 SERVICE_UNAVAILABLE with Retry-After within the
 * edge's bound on a call (a blackholed control plane never answers, so without it the request
 * hangs), and requests succeed again once the path is healthy.
 */

/** The edge's bound on a control-plane call in this test (production: the default, 40 s). */
const CALL_BOUND_MS = 3_000;
/** The bound and a busy machine's margin. */
const ANSWER_BOUND_MS = CALL_BOUND_MS + 2_000;

interface Answer {
  status: number | 'timeout' | 'error';
  ms: number;
  retryAfter: string | null;
  code?: string;
}

describe('the edge behind a faulty network path to the control plane', () => {
  let toxiproxy: Toxiproxy;
  let link: Proxy;
  let stack: TestStack;
  let auth: Record<string, string>;

  beforeAll(async () => {
    toxiproxy = await startToxiproxy();
    stack = await startTestStack({
      controlPlane: 'http',
      controlPlaneTimeoutMs: CALL_BOUND_MS,
      controlPlaneVia: async (upstream) => (link = await toxiproxy.proxy('control-plane', upstream)).listen,
    });
    auth = { authorization: `Bearer ${await stack.token(ADMIN)}` };
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await toxiproxy?.close();
  }, 60_000);

  const answer = async (send: (signal: AbortSignal) => Promise<Response>): Promise<Answer> => {
    const started = Date.now();
    try {
      const response = await send(AbortSignal.timeout(ANSWER_BOUND_MS * 4));
      const body = (await response.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
      return { status: response.status, ms: Date.now() - started, retryAfter: response.headers.get('retry-after'), code: body?.error?.code };
    } catch (error) {
      return { status: (error as Error).name === 'TimeoutError' ? 'timeout' : 'error', ms: Date.now() - started, retryAfter: null };
    }
  };
  const read = () => answer((signal) => fetch(`${stack.url}${V3}/users/me`, { headers: auth, signal }));
  const write = () =>
    answer((signal) => fetch(`${stack.url}${V3}/resources/project`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'link fault' }), signal }));
  const upload = () =>
    answer((signal) =>
      fetch(`${stack.url}${V3}/documents`, { method: 'POST', headers: auth, body: form([{ filename: 'note.txt', bytes: new TextEncoder().encode('a note'), type: 'text/plain' }]), signal }),
    );

  const expectUnavailable = (answers: Answer[]) => {
    const seen = JSON.stringify(answers);
    for (const a of answers) {
      expect({ status: a.status, code: a.code, retryAfter: /^\d+$/.test(a.retryAfter ?? '') }, seen).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: true });
      expect(a.ms, seen).toBeLessThanOrEqual(ANSWER_BOUND_MS);
    }
  };

  for (const [what, toxic] of PATH_CUTS) {
    it(`answers 503 with Retry-After while the control plane is ${what}, and serves again after`, async () => {
      expect((await read()).status).toBe(200);
      await link.add('fault', toxic);
      let answers: Answer[];
      try {
        answers = await Promise.all([read(), write(), upload()]);
        process.stderr.write(`[control-plane-link-faults] ${what}: answers ${answers.map((a) => `${a.status} in ${a.ms} ms`).join(', ')}\n`);
      } finally {
        await link.remove('fault');
      }
      expectUnavailable(answers);
      const removedAt = Date.now();
      for (;;) {
        const again = await read();
        if (again.status === 200) break;
        expect(Date.now() - removedAt, JSON.stringify(again)).toBeLessThan(ANSWER_BOUND_MS * 2);
      }
      process.stderr.write(`[control-plane-link-faults] ${what} removed: served again after ${Date.now() - removedAt} ms\n`);
      expect((await write()).status).toBeLessThan(300);
    }, 90_000);
  }

  it('keeps no call waiting past the bound while the path is blackholed under several requests', async () => {
    await link.add('fault', BLACKHOLE);
    try {
      expectUnavailable(await Promise.all(Array.from({ length: 6 }, read)));
    } finally {
      await link.remove('fault');
    }
  }, 60_000);
});
