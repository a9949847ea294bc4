import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { migrate } from '../../control-plane/app/migrate.ts';
import { ensureTenantLogin } from '../../control-plane/db/tenant-login.ts';
import { startPlatform, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { createDatabase, ensureLocalPostgres } from '../../scripts/stack/postgres.ts';
import { freePort, isAlive } from '../../scripts/stack/process.ts';

/**
 * A PostgreSQL cluster of this test's own is stopped the way a crash stops it (`pg_ctl -m
 * immediate`: SIGQUIT to the postmaster) and started again under a trickle of reads and writes,
 * with the edge calling the control plane in-process and over tRPC's HTTP link. The shared test
 * cluster is never touched.
 */

/** The longest any answer may take while the database is away or coming back: the 5 s wait for a connection, and a busy machine's margin (docs/behaviour.md, "Database faults"). */
const ANSWER_BOUND_MS = 8_000;
/** How soon after PostgreSQL accepts connections again the platform answers with success. */
const RECOVERY_BOUND_MS = 5_000;
const CLUSTER = 'pg-db-restart-test';

interface Answer {
  kind: 'read' | 'write' | 'live' | 'ready';
  at: number;
  ms: number;
  status: number | 'timeout' | 'error';
  retryAfter: string | null;
  code?: string;
  key?: string;
  name?: string;
  id?: string;
}

describe('the platform across a PostgreSQL restart', () => {
  let port: number;
  let dataDir: string;
  let databaseUrl: string;
  let tenantDatabaseUrl: string;
  const platforms: RunningPlatform[] = [];

  const startCluster = async () => {
    const cluster = await ensureLocalPostgres({ name: CLUSTER, port, durable: true, log: (msg) => process.stderr.write(`[${CLUSTER}] ${msg}\n`) });
    dataDir = cluster.dataDir;
    return cluster;
  };

  /** What `pg_ctl -m immediate stop` does: SIGQUIT to the postmaster, which ends every backend at once without a checkpoint. */
  const crashCluster = async () => {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGQUIT');
    while (isAlive(pid)) await sleep(20);
  };

  beforeAll(async () => {
    port = await freePort();
    const cluster = await startCluster();
    databaseUrl = await createDatabase(cluster.url, 'svc_restart');
    await migrate(databaseUrl);
    tenantDatabaseUrl = await ensureTenantLogin(databaseUrl);
  }, 300_000);

  afterAll(async () => {
    for (const platform of platforms.reverse()) await platform.close().catch(() => {});
    await (await startCluster()).stop();
  }, 120_000);

  async function startStack(mode: 'in-process' | 'http'): Promise<string> {
    const common = { databaseUrl, tenantDatabaseUrl, blobRoot: join(dataDir, '..', `blobs-${mode}`), seedDevelopmentData: true };
    if (mode === 'in-process') {
      const platform = await startPlatform({ role: 'all', port: 0, ...common });
      platforms.push(platform);
      return platform.url;
    }
    const edgePort = await freePort();
    const publicUrl = `http://127.0.0.1:${edgePort}`;
    const controlPlane = await startPlatform({ role: 'control-plane', port: 0, publicUrl, ...common });
    platforms.push(controlPlane);
    const edge = await startPlatform({ role: 'edge', port: edgePort, publicUrl, databaseUrl, controlPlaneUrl: controlPlane.url, controlPlaneToken: controlPlane.controlPlaneToken });
    platforms.push(edge);
    return edge.url;
  }

  for (const mode of ['in-process', 'http'] as const) {
    it(`answers 503 with Retry-After or success, never hangs, serves again soon and loses no acknowledged write (${mode})`, async () => {
      const url = await startStack(mode);
      const token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
      const auth = { authorization: `Bearer ${token}` };
      const t0 = Date.now();
      const answers: Answer[] = [];

      const call = async (kind: Answer['kind'], path: string, init: RequestInit = {}, extra: Partial<Answer> = {}) => {
        const at = Date.now() - t0;
        const answer: Answer = { kind, at, ms: 0, status: 'error', retryAfter: null, ...extra };
        try {
          const response = await fetch(url + path, { ...init, signal: AbortSignal.timeout(ANSWER_BOUND_MS * 3) });
          answer.status = response.status;
          answer.retryAfter = response.headers.get('retry-after');
          const body = (await response.json().catch(() => undefined)) as { error?: { code?: string }; id?: string } | undefined;
          answer.code = body?.error?.code;
          answer.id = body?.id;
        } catch (error) {
          answer.status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'error';
        }
        answer.ms = Date.now() - t0 - at;
        answers.push(answer);
        return answer;
      };
      const write = (key: string = randomUUID(), name = `restart ${randomUUID()}`) =>
        call('write', '/v4/data/resources/acme/project', { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ data: { name } }) }, { key, name });

      let trickling = true;
      const trickle = (async () => {
        const inFlight: Array<Promise<unknown>> = [];
        while (trickling) {
          inFlight.push(call('read', '/api/svc/v3/users/me', { headers: auth }), write(), call('live', '/health/live'), call('ready', '/health/ready'));
          await sleep(150);
        }
        await Promise.all(inFlight);
      })();

      await sleep(2_000);
      await crashCluster();
      const stoppedAt = Date.now() - t0;
      await sleep(5_000);
      await startCluster();
      const acceptingAt = Date.now() - t0;
      await sleep(RECOVERY_BOUND_MS + 3_000);
      trickling = false;
      await trickle;

      const during = answers.filter((a) => a.at >= stoppedAt);
      const slow = answers.filter((a) => a.ms > ANSWER_BOUND_MS);
      const summary = [...slow, ...during].map((a) => `${a.kind}@${a.at}:${a.status}/${a.ms}ms`).join(' ');
      // No request hangs: each is answered within the bound, with success or 503 + Retry-After.
      for (const answer of answers.filter((a) => a.kind === 'read' || a.kind === 'write')) {
        expect(answer.ms, summary).toBeLessThanOrEqual(ANSWER_BOUND_MS);
        if (typeof answer.status === 'number' && answer.status < 300) continue;
        expect({ status: answer.status, code: answer.code, retryAfter: answer.retryAfter && /^\d+$/.test(answer.retryAfter) }, summary).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: true });
      }
      expect(during.some((a) => a.kind === 'read' && a.status === 503), summary).toBe(true);
      // Liveness never depends on the database; readiness does.
      expect(answers.filter((a) => a.kind === 'live').every((a) => a.status === 200 && a.ms < ANSWER_BOUND_MS), summary).toBe(true);
      expect(during.some((a) => a.kind === 'ready' && a.status === 503), summary).toBe(true);
      // Served again soon after the database is back.
      const servedAgain = (kind: Answer['kind']) => answers.find((a) => a.kind === kind && a.at >= acceptingAt && a.status === (kind === 'write' ? 201 : 200));
      for (const kind of ['read', 'write', 'ready'] as const) {
        const first = servedAgain(kind);
        expect(first, `${kind} never succeeded after the restart: ${summary}`).toBeDefined();
        expect(first!.at + first!.ms - acceptingAt, summary).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      }

      // Every acknowledged write is there; each refused one, retried with its key, is there exactly once.
      const writes = answers.filter((a) => a.kind === 'write');
      for (const refused of writes.filter((a) => a.status !== 201)) {
        const retried = await write(refused.key, refused.name);
        expect(retried.status).toBe(201);
        refused.id = retried.id;
        const found = await fetch(`${url}/api/svc/v3/resources?type=project&filter[name]=${encodeURIComponent(refused.name!)}`, { headers: auth });
        expect(((await found.json()) as { total: number }).total).toBe(1);
      }
      for (const written of writes) {
        const stored = await fetch(`${url}/v4/data/resources/acme/project/${written.id}`, { headers: auth });
        expect(stored.status).toBe(200);
        expect(((await stored.json()) as { data: { name: string } }).data.name).toBe(written.name);
      }
      const names = new Set(writes.map((w) => w.name));
      expect(names.size).toBe(writes.length);
    }, 120_000);
  }
});
