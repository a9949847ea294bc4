import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { startPlatform, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { DEFAULT_DB_TIMEOUTS } from '../../control-plane/db/faults.ts';
import { BLACKHOLE, RESET, startToxiproxy, type Proxy, type Toxiproxy } from '../harness/toxiproxy.ts';

/**
 * The platform reaches PostgreSQL through toxiproxy, which slows, blackholes and resets that
 * network path while requests come in: every answer is a success or a 503 with Retry-After within
 * the database timeouts (docs/decisions/0142-database-faults.md), none hangs, and the platform
 * serves again once the path is healthy. The shared test cluster itself is never touched.
 */

/** The longest an answer may take while the path is faulty: the 5 s connection wait and a busy machine's margin. */
const ANSWER_BOUND_MS = 8_000;
/** How soon after the fault is removed a read succeeds again. */
const RECOVERY_BOUND_MS = 5_000;

interface Answer {
  status: number | 'timeout' | 'error';
  ms: number;
  retryAfter: string | null;
  code?: string;
}

/** `url` with its host and port replaced by `listen` (`host:port`). */
function through(url: string, listen: string): string {
  const proxied = new URL(url);
  proxied.host = listen;
  return proxied.toString();
}

describe('the platform behind a faulty network path to PostgreSQL', () => {
  let toxiproxy: Toxiproxy;
  let postgres: Proxy;
  let platform: RunningPlatform;
  let blobRoot: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    toxiproxy = await startToxiproxy();
    postgres = await toxiproxy.proxy('postgres', new URL(inject('databaseUrl')).host);
    blobRoot = await mkdtemp(join(tmpdir(), 'svc-blobs-'));
    platform = await startPlatform({
      role: 'all',
      port: 0,
      databaseUrl: through(inject('databaseUrl'), postgres.listen),
      tenantDatabaseUrl: through(inject('tenantDatabaseUrl'), postgres.listen),
      blobRoot,
      seedDevelopmentData: true,
      rateLimits: { keyPrefix: `faults-${Date.now()}` },
      // A statement timeout of 3 s: a connection unanswered for 5 s is cut (db/faults.ts), within the answer bound.
      dbTimeouts: { ...DEFAULT_DB_TIMEOUTS, statementMs: 3_000 },
    });
    auth = { authorization: `Bearer ${(await loginWithPkce({ issuer: platform.url, email: 'admin@acme.test' })).accessToken}` };
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    await toxiproxy?.close();
    await rm(blobRoot, { recursive: true, force: true });
  }, 60_000);

  const read = async (): Promise<Answer> => {
    const started = Date.now();
    try {
      const response = await fetch(`${platform.url}/api/svc/v3/users/me`, { headers: auth, signal: AbortSignal.timeout(ANSWER_BOUND_MS * 4) });
      const body = (await response.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
      return { status: response.status, ms: Date.now() - started, retryAfter: response.headers.get('retry-after'), code: body?.error?.code };
    } catch (error) {
      return { status: (error as Error).name === 'TimeoutError' ? 'timeout' : 'error', ms: Date.now() - started, retryAfter: null };
    }
  };

  /** Success, or 503 SERVICE_UNAVAILABLE with a Retry-After in seconds; within the bound either way. */
  const expectTruthful = (answers: Answer[]) => {
    const seen = JSON.stringify(answers);
    for (const answer of answers) {
      expect(answer.ms, seen).toBeLessThanOrEqual(ANSWER_BOUND_MS);
      if (answer.status === 200) continue;
      expect({ status: answer.status, code: answer.code, retryAfter: /^\d+$/.test(answer.retryAfter ?? '') }, seen).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: true });
    }
  };

  /** Reads until one succeeds; how long after `since` that was. */
  const servedAgainAfter = async (since: number): Promise<number> => {
    for (;;) {
      const answer = await read();
      if (answer.status === 200) return Date.now() - since;
      expectTruthful([answer]);
      if (Date.now() - since > RECOVERY_BOUND_MS * 3) throw new Error(`no read succeeded within ${RECOVERY_BOUND_MS * 3} ms of the fault's removal: ${JSON.stringify(answer)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('answers through 200 ms of latency each way, only slower', async () => {
    expect((await read()).status).toBe(200);
    await postgres.add('slow', { type: 'latency', attributes: { latency: 200 } });
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, read));
      expectTruthful(answers);
      expect(answers.some((a) => a.status === 200), JSON.stringify(answers)).toBe(true);
    } finally {
      await postgres.remove('slow');
    }
  }, 60_000);

  it('answers through a 16 KB/s bandwidth limit, success or 503 within the bound', async () => {
    expect((await read()).status).toBe(200);
    await postgres.add('narrow', { type: 'bandwidth', attributes: { rate: 16 } });
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, read));
      process.stderr.write(`[database-network-faults] 16 KB/s: answers ${answers.map((a) => `${a.status} in ${a.ms} ms`).join(', ')}\n`);
      expectTruthful(answers);
    } finally {
      await postgres.remove('narrow');
    }
  }, 60_000);

  it('answers 503 with Retry-After while PostgreSQL is blackholed, never hangs, and serves again soon after', async () => {
    expect((await read()).status).toBe(200);
    await postgres.add('blackhole', BLACKHOLE);
    let removedAt = 0;
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, read));
      process.stderr.write(`[database-network-faults] blackholed: answers ${answers.map((a) => `${a.status} in ${a.ms} ms`).join(', ')}\n`);
      expectTruthful(answers);
      expect(answers.some((a) => a.status === 503), JSON.stringify(answers)).toBe(true);
    } finally {
      await postgres.remove('blackhole');
      removedAt = Date.now();
    }
    const recovery = await servedAgainAfter(removedAt);
    process.stderr.write(`[database-network-faults] blackhole removed: served again after ${recovery} ms\n`);
    expect(recovery).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
  }, 90_000);

  it('answers 503, not 500, while PostgreSQL connections are reset', async () => {
    expect((await read()).status).toBe(200);
    await postgres.add('reset', RESET);
    let removedAt = 0;
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, read));
      expectTruthful(answers);
      expect(answers.some((a) => a.status === 503), JSON.stringify(answers)).toBe(true);
    } finally {
      await postgres.remove('reset');
      removedAt = Date.now();
    }
    const recovery = await servedAgainAfter(removedAt);
    process.stderr.write(`[database-network-faults] resets removed: served again after ${recovery} ms\n`);
    expect(recovery).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
  }, 90_000);
});
