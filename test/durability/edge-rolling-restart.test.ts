import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { startKeyServer, type KeyServer } from '../harness/key-server.ts';
import { startMainProcess, type MainProcess } from '../harness/main-process.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

/**
 * A rolling restart of the edge, with the roles laid out as the chart runs them: one control plane
 * on Node and two edges on Bun, each a real process (`main.ts --role control-plane | edge`), the edges
 * calling the control plane over tRPC's HTTP link with its credential, tokens from an external
 * provider both verify. Clients create (v4, with an Idempotency-Key) and read on both edges; a
 * request refused, cut or answered 503 is sent again to the other edge with the same key and body,
 * as a load balancer routes a retry. Each edge in turn gets SIGTERM (a drained shutdown) and is
 * started again: every request ends in success, every acknowledged create is stored once, and no
 * retried create made a second resource.
 */

const GRACE_SECONDS = 10;
const AUDIENCE = 'urn:svc:api';
const CLIENTS = 4;
/** How long one request (with its retries) may take before the test calls it lost. */
const REQUEST_DEADLINE_MS = 60_000;

/** What one logical request took: its attempts, the edges they went to, and why each failed attempt did. */
interface Sent {
  attempts: number;
  edges: Set<number>;
  failures: string[];
}

describe('a rolling restart of two edges under load', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const started: ChildProcess[] = [];
  const controlPlaneToken = randomBytes(32).toString('base64url');
  let keys: KeyServer;
  let tenant: TenantFixture;
  let stateDir: string;
  let controlPlaneUrl: string;
  let edgePorts: number[];

  const edgeUrl = (edge: number) => `http://127.0.0.1:${edgePorts[edge]}`;

  /** A role's real process, on Bun for the edge and on Node for the control plane, as the chart runs them. */
  const startRole = (role: 'control-plane' | 'edge', port: number, env: Record<string, string>): Promise<MainProcess> =>
    startMainProcess(
      role,
      {
        SVC_STATE_DIR: stateDir,
        SVC_CACHE_DIR: join(stateDir, 'cache'),
        SVC_BLOB_DIR: join(stateDir, 'blobs'),
        KUBECONFIG: join(stateDir, 'no-kubeconfig'),
        DATABASE_URL: inject('databaseUrl'),
        TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
        // The run's operator key, which sealed the secrets the control plane reads.
        SECRETS_KEY: devSecretsKey().toString('base64'),
        AUTH_ISSUER: keys.issuer,
        AUTH_JWKS_URL: keys.jwksUrl,
        AUTH_AUDIENCE: AUDIENCE,
        AUTH_FIRST_PARTY_CLIENTS: 'svc-cli',
        CONTROL_PLANE_TOKEN: controlPlaneToken,
        HOST: '127.0.0.1',
        PORT: String(port),
        SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
        RATE_LIMIT_RESOURCES_PER_MINUTE: '1000000',
        RATE_LIMIT_API_PER_MINUTE: '1000000',
        ...env,
      },
      { runtime: role === 'edge' ? 'bun' : 'node', started: (child) => started.push(child) },
    );

  const startEdge = async (edge: number): Promise<MainProcess> => {
    const running = await startRole('edge', edgePorts[edge]!, { PUBLIC_URL: edgeUrl(edge), CONTROL_PLANE_URL: controlPlaneUrl });
    await until(() => fetch(`${edgeUrl(edge)}/health/ready`).then((r) => r.status), (status) => status === 200, 30_000);
    return running;
  };

  beforeAll(async () => {
    keys = await startKeyServer('rolling-1');
    tenant = await createTenantFixture(sql, 'rolling');
    stateDir = await mkdtemp(join(tmpdir(), 'svc-rolling-'));
    const controlPlanePort = await freePort();
    controlPlaneUrl = `http://127.0.0.1:${controlPlanePort}`;
    edgePorts = [await freePort(), await freePort()];
  });
  afterAll(async () => {
    for (const child of started.filter((c) => c.exitCode === null && c.signalCode === null)) {
      killProcessGroup(child);
      await once(child, 'exit');
    }
    await keys?.close();
    await sql.end();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('loses no request, and stores every acknowledged create once, when clients retry on the other edge with their Idempotency-Key', async () => {
    const controlPlane = await startRole('control-plane', Number(new URL(controlPlaneUrl).port), { PUBLIC_URL: edgeUrl(0) });
    const edges = [await startEdge(0), await startEdge(1)];
    const { sub, email, name } = tenant.admin;
    const token = await keys.sign({ sub, email, email_verified: true, name, azp: 'svc-cli' });
    const collection = `/v4/data/resources/${tenant.id}/project`;
    const run = randomUUID();
    /** Answers other than a success, a refused or cut connection, or a 503 with Retry-After: each one a failure of the test. */
    const unexpected: string[] = [];

    /**
     * Sends one request to `first`, and on a refused or cut connection or a 503 again to the other
     * edge (then back), the same request each time, until `accepted` holds for its answer.
     */
    const send = async (first: number, path: string, init: RequestInit, accepted: number): Promise<{ response: Response; sent: Sent }> => {
      const sent: Sent = { attempts: 0, edges: new Set(), failures: [] };
      const deadline = Date.now() + REQUEST_DEADLINE_MS;
      for (let edge = first; Date.now() < deadline; edge = 1 - edge) {
        sent.attempts++;
        sent.edges.add(edge);
        const response = await fetch(edgeUrl(edge) + path, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) }).catch(
          (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.name,
        );
        if (typeof response !== 'string' && response.status === accepted) return { response, sent };
        if (typeof response === 'string') sent.failures.push(response);
        else {
          const text = await response.text();
          sent.failures.push(String(response.status));
          if (response.status !== 503 || response.headers.get('retry-after') === null) unexpected.push(`${init.method ?? 'GET'} ${path} on edge ${edge}: ${response.status} ${text.slice(0, 300)}`);
        }
        await sleep(50);
      }
      throw new Error(`${init.method ?? 'GET'} ${path} did not succeed within ${REQUEST_DEADLINE_MS} ms: ${sent.failures.join(', ')}`);
    };

    const creates: Array<{ name: string; id: string; sent: Sent }> = [];
    const reads: Sent[] = [];
    let loading = true;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; loading; i++) {
        // Round robin over the two edges, as a load balancer spreads new requests.
        const edge = (client + i) % 2;
        const name = `rolling ${run} ${client}-${i}`;
        const create = await send(edge, collection, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify({ data: { name } }) }, 201);
        const id = ((await create.response.json()) as { id: string }).id;
        creates.push({ name, id, sent: create.sent });
        const read = await send(1 - edge, `${collection}/${id}`, {}, 200);
        expect(((await read.response.json()) as { data: { name: string } }).data.name).toBe(name);
        reads.push(read.sent);
      }
    });
    const clientsFailed = Promise.all(clients).then(
      () => undefined,
      (error: unknown) => error,
    );

    // The rolling restart: one edge at a time stops (drained) and starts again while the other serves.
    await sleep(2_000);
    const restarts: string[] = [];
    for (const edge of [0, 1]) {
      const stoppedAt = Date.now();
      edges[edge]!.child.kill('SIGTERM');
      expect(await edges[edge]!.exited, edges[edge]!.output()).toBe(0);
      const exitedMs = Date.now() - stoppedAt;
      expect(edges[edge]!.output()).not.toMatch(/server error|Error:/);
      edges[edge] = await startEdge(edge);
      restarts.push(`edge ${edge}: exited ${exitedMs} ms after SIGTERM, serving again ${Date.now() - stoppedAt} ms after it`);
      await sleep(2_000);
    }
    loading = false;
    expect(await clientsFailed).toBeUndefined();

    const all = [...creates.map((c) => c.sent), ...reads];
    const retried = all.filter((s) => s.attempts > 1);
    const failures = retried.flatMap((s) => s.failures);
    process.stderr.write(
      `[edge-rolling-restart] ${restarts.join('; ')}; ${creates.length} creates and ${reads.length} reads, ${retried.length} retried on the other edge ` +
        `(failed attempts: ${[...new Set(failures)].map((f) => `${f} x${failures.filter((x) => x === f).length}`).join(', ')})\n`,
    );
    expect(unexpected).toEqual([]);
    // The restarts were felt: some requests found their edge gone and were retried on the other.
    expect(retried.length).toBeGreaterThan(0);
    expect(new Set(creates.map((c) => c.id)).size).toBe(creates.length);

    // Every acknowledged create is stored, once, under the id its answer gave; no retry stored another.
    const stored = await sql<{ id: string; name: string }[]>`
      select id::text as id, data->>'name' as name from resources
      where tenant_id = ${tenant.id}::uuid and type = 'project' and data->>'name' like ${`rolling ${run} %`}`;
    expect(stored.length).toBe(creates.length);
    expect(new Map(stored.map((r) => [r.name, r.id]))).toEqual(new Map(creates.map((c) => [c.name, c.id])));

    for (const edge of edges) edge.child.kill('SIGTERM');
    controlPlane.child.kill('SIGTERM');
    expect(await Promise.all([...edges.map((e) => e.exited), controlPlane.exited])).toEqual([0, 0, 0]);
  }, 300_000);
});
