import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';
import { webhookSignature } from '../../control-plane/webhooks/webhook-signature.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { createDocsTenant, form, postForm } from '../harness/documents.ts';
import { startMainProcess } from '../harness/main-process.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { copyExampleWorkflows, createTenantFixture } from '../harness/tenant-fixture.ts';
import { runStatusesAt } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

/** A Temporal address that accepts connections and never answers: a start there hangs, then fails. */
async function unansweringTemporal() {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * Committed work survives the death of the process that committed it: a process commits a document
 * job or an execution and starts its workflow on a Temporal server that never answers; it is killed
 * while that start hangs, so the work is committed and never started. Another process of the
 * deployment (the stack, on the same task queue and a working Temporal) then starts it, once; so
 * too for a webhook delivery whose control plane (a real `main.ts --role control-plane` process
 * behind an edge) is killed while the start hangs. A
 * webhook delivery accepted while Temporal is down is answered 202 and its workflow runs once
 * Temporal is back (docs/decisions/0146-workflow-outbox.md).
 */
describe('the workflow outbox after a crash between commit and start', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const children: ChildProcess[] = [];
  const stacks: TestStack[] = [];
  const temporal = { address: inject('temporalAddress'), namespace: inject('temporalNamespace') };
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) killProcessGroup(child);
    for (const stack of stacks.splice(0).reverse()) await stack.close();
  });
  afterAll(() => sql.end());

  /** The committing process, on the unanswering Temporal, in a process group of its own. */
  function commitThenDie(stack: TestStack, temporalAddress: string, args: string[]): ChildProcess {
    const child = spawn('node_modules/.bin/tsx', ['test/durability/commit-then-die.ts', ...args], {
      env: {
        ...process.env,
        DATABASE_URL: inject('databaseUrl'),
        TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_NAMESPACE: temporal.namespace,
        TEMPORAL_TASK_QUEUE: stack.temporal.taskQueue,
        SVC_BLOB_DIR: stack.blobRoot,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') process.stderr.write(`commit-then-die exited (${code ?? signal}): ${output.slice(-2000)}\n`);
    });
    children.push(child);
    return child;
  }

  const runsOf = (workflowId: string) => runStatusesAt(temporal, workflowId);

  it('starts a document job committed by a process that died before starting it; the document can be re-indexed after', async () => {
    const hole = await unansweringTemporal();
    try {
      const team = await createDocsTenant(sql, 'team', 'outbox');
      const stack = await startTestStack({ devUsers: [...DEV_USERS, team.admin] });
      stacks.push(stack);
      const token = await stack.token(team.admin.email);
      const created = await postForm(stack, `${V3}/documents`, token, form([{ filename: 'lease.txt', bytes: Buffer.from('The Lisbon office lease ends in March and renews for five years.') }]));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id: string = created.body.id;

      const child = commitThenDie(stack, hole.address, ['index', team.id, id]);
      const queued = await until(() => sql<{ id: string; state: string }[]>`select id::text as id, state from document_jobs where document_id = ${id}::uuid`, (rows) => rows.length === 1, 60_000);
      expect(queued[0]!.state).toBe('queued');
      killProcessGroup(child);

      const job = () => stack.request('GET', `/v4/data/documents/rag-index/${queued[0]!.id}`, { token });
      const done = await until(job, (r) => r.body.state !== 'queued' && r.body.state !== 'running', 150_000);
      expect(done.body).toMatchObject({ state: 'completed', error: null });
      expect((await stack.request('GET', `${V3}/documents/${id}`, { token })).body).toMatchObject({ status: 'ready', indexed: true });
      expect(await sql`select 1 from workflow_outbox where tenant_id = ${team.id}::uuid`).toHaveLength(0);

      const again = await stack.request('POST', '/v4/data/documents/rag-index', { token, body: { documentId: id, chunkSize: 100, chunkOverlap: 20 } });
      expect(again.status, JSON.stringify(again.body)).toBe(202);
    } finally {
      hole.close();
    }
  }, 300_000);

  it('runs an execution committed by a process that died before starting it exactly once', async () => {
    const hole = await unansweringTemporal();
    try {
      const stack = await startTestStack();
      stacks.push(stack);
      const [acme] = await sql<{ id: string }[]>`select id::text as id from tenants where slug = 'acme'`;
      const [admin] = await sql<{ id: string }[]>`select id::text as id from users where email = ${ADMIN}`;
      const name = `Outbox ${randomUUID()}`;
      const child = commitThenDie(stack, hole.address, ['execute', acme!.id, 'project-intake', JSON.stringify({ name, budget: 250, reviewMs: 100 }), admin!.id]);
      const committed = await until(
        () => sql<{ id: string; state: string }[]>`select id::text as id, state from executions where tenant_id = ${acme!.id}::uuid and input ->> 'name' = ${name}`,
        (rows) => rows.length === 1,
        60_000,
      );
      killProcessGroup(child);

      const execution = () => stack.request('GET', `${V3}/orchestrate/executions/${committed[0]!.id}`, { as: ADMIN });
      const done = await until(execution, (r) => r.body.state !== 'running', 150_000);
      expect(done.body.state, JSON.stringify(done.body)).toBe('completed');
      const records = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${encodeURIComponent(name)}`, { as: ADMIN });
      expect(records.body.total).toBe(1);
      expect(await until(() => runsOf(`exec-${committed[0]!.id}`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
    } finally {
      hole.close();
    }
  }, 300_000);

  it('starts the workflow of a delivery once when the control plane that stored it is killed before starting it', async () => {
    const hole = await unansweringTemporal();
    const taskQueue = `test-${randomUUID()}`;
    const south = await createTenantFixture(sql, 'outbox-whk', { plan: 'team' });
    const stateDir = await mkdtemp(join(tmpdir(), 'svc-outbox-whk-'));
    try {
      // Another control plane of the deployment, on the same task queue and a working Temporal, with its worker.
      const up = await startTestStack({ taskQueue, devUsers: [...DEV_USERS, south.admin] });
      stacks.push(up);
      await copyExampleWorkflows(sql, south.id);
      const created = await up.request('POST', `/v4/webhooks/${south.id}/endpoints`, { as: south.admin.email, body: { source: 'billing', workflowId: 'active-projects' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);

      // The roles as the chart runs them (an edge on Bun, the control plane on Node), the control plane's Temporal never answering.
      const [controlPlanePort, edgePort] = [await freePort(), await freePort()];
      const edgeUrl = `http://127.0.0.1:${edgePort}`;
      const common = {
        DATABASE_URL: inject('databaseUrl'),
        TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
        // The run's operator key, which sealed the endpoint's secret.
        SECRETS_KEY: devSecretsKey().toString('base64'),
        SVC_STATE_DIR: stateDir,
        SVC_CACHE_DIR: join(stateDir, 'cache'),
        SVC_BLOB_DIR: up.blobRoot,
        KUBECONFIG: join(stateDir, 'no-kubeconfig'),
        HOST: '127.0.0.1',
        PUBLIC_URL: edgeUrl,
        CONTROL_PLANE_TOKEN: randomBytes(32).toString('base64url'),
      };
      const started = (child: ChildProcess) => children.push(child);
      const controlPlane = await startMainProcess(
        'control-plane',
        { ...common, PORT: String(controlPlanePort), TEMPORAL_ADDRESS: hole.address, TEMPORAL_NAMESPACE: temporal.namespace, TEMPORAL_TASK_QUEUE: taskQueue },
        { runtime: 'node', started },
      );
      await startMainProcess('edge', { ...common, PORT: String(edgePort), CONTROL_PLANE_URL: `http://127.0.0.1:${controlPlanePort}` }, { runtime: 'bun', started });

      const body = `{"invoice":"INV-${randomUUID()}"}`;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const headers = { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': `sha256=${webhookSignature(created.body.secret, timestamp, Buffer.from(body))}`, 'x-webhook-id': `evt-${randomUUID()}` };
      const delivered = fetch(`${edgeUrl}/v4/webhooks/${south.id}/billing`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body }).then(
        async (response) => ({ status: response.status, body: await response.text() }),
        (error: Error) => ({ status: 0, body: error.message }),
      );
      // The delivery and its execution are committed; the start hangs on the unanswering Temporal. The control plane dies there.
      const committed = await until(
        () => sql<{ id: string; state: string }[]>`select id::text as id, state from executions where tenant_id = ${south.id}::uuid`,
        (rows) => rows.length === 1,
        30_000,
      );
      expect(await sql`select 1 from workflow_outbox where tenant_id = ${south.id}::uuid`).toHaveLength(1);
      killProcessGroup(controlPlane.child);
      // The sender is told the truth: not accepted, try again.
      const answer = await delivered;
      expect(answer.status, answer.body).toBe(503);

      const id = committed[0]!.id;
      const execution = () => up.request('GET', `${V3}/orchestrate/executions/${id}`, { as: south.admin.email, headers: { 'x-tenant-id': south.id } });
      const done = await until(execution, (r) => r.status === 200 && r.body.state !== 'running', 150_000);
      expect(done.body).toMatchObject({ state: 'completed', input: JSON.parse(body) as Record<string, unknown> });
      expect(await until(() => runsOf(`exec-${id}`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
      expect(await sql`select 1 from workflow_outbox where tenant_id = ${south.id}::uuid`).toHaveLength(0);
      expect(await sql`select status, execution_id::text as "executionId" from webhook_deliveries where tenant_id = ${south.id}::uuid`).toEqual([{ status: 'accepted', executionId: id }]);
      // The sender's retry finds the event kept and run: refused as a replay, and nothing runs twice.
      expect((await up.request('POST', `/v4/webhooks/${south.id}/billing`, { rawBody: body, headers })).status).toBe(409);
      expect(await sql`select 1 from executions where tenant_id = ${south.id}::uuid`).toHaveLength(1);
    } finally {
      hole.close();
      await rm(stateDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('answers 202 for a delivery accepted while Temporal is unreachable, and runs its workflow once Temporal is back', async () => {
    const hole = await unansweringTemporal();
    const taskQueue = `test-${randomUUID()}`;
    const west = await createTenantFixture(sql, 'outbox-wh', { plan: 'team' });
    try {
      const down = await startTestStack({ temporal: { address: hole.address, namespace: temporal.namespace }, taskQueue, worker: false, devUsers: [...DEV_USERS, west.admin] });
      stacks.push(down);
      await copyExampleWorkflows(sql, west.id);
      const created = await down.request('POST', `/v4/webhooks/${west.id}/endpoints`, { as: west.admin.email, body: { source: 'billing', workflowId: 'active-projects' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const body = '{"invoice":"INV-9"}';
      const timestamp = String(Math.floor(Date.now() / 1000));
      const headers = { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': `sha256=${webhookSignature(created.body.secret, timestamp, Buffer.from(body))}`, 'x-webhook-id': `evt-${randomUUID()}` };
      const delivered = await down.request('POST', `/v4/webhooks/${west.id}/billing`, { rawBody: body, headers });
      expect(delivered.status, JSON.stringify(delivered.body)).toBe(202);
      expect(delivered.body).toEqual({ deliveryId: expect.any(String), status: 'accepted', executionId: expect.any(String) });
      const [row] = await sql<{ state: string }[]>`select state from executions where id = ${delivered.body.executionId}::uuid`;
      expect(row!.state).toBe('running');
      await down.close();
      stacks.splice(stacks.indexOf(down), 1);

      const up = await startTestStack({ taskQueue, devUsers: [...DEV_USERS, west.admin] });
      stacks.push(up);
      const execution = () => up.request('GET', `${V3}/orchestrate/executions/${delivered.body.executionId}`, { as: west.admin.email, headers: { 'x-tenant-id': west.id } });
      const done = await until(execution, (r) => r.status === 200 && r.body.state !== 'running', 150_000);
      expect(done.body).toMatchObject({ state: 'completed', input: { invoice: 'INV-9' } });
      // The execution's record is written by the run's last step; the run itself closes just after.
      expect(await until(() => runsOf(`exec-${delivered.body.executionId}`), (runs) => !runs.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
      // The sender's retry is a replay of an event that was kept and run: refused, as it should be.
      expect((await up.request('POST', `/v4/webhooks/${west.id}/billing`, { rawBody: body, headers })).status).toBe(409);
    } finally {
      hole.close();
    }
  }, 300_000);
});
