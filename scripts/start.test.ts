import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtDecrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../api-edge/identity/login-flow.ts';
import { killProcessGroup } from '../test/harness/process-group.ts';
import { until } from '../test/harness/until.ts';
import { bunExecutable } from './stack/bun.ts';
import { startPlatform } from '../control-plane/app/platform.ts';
import { freePort } from './stack/process.ts';

/** The direct children of `pid`, by command line (read from /proc: minimal systems have no `ps`). */
function childrenOf(pid: number): Array<{ pid: number; command: string }> {
  const children: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; the command (field 2) may hold spaces, so read after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== pid) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      children.push({ pid: Number(entry), command });
    } catch {
      // the process ended while being read
    }
  }
  return children;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The run's database and Temporal server, a task queue of its own (only this platform's worker runs its executions) and `stateDir`. */
function platformEnv(stateDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: inject('databaseUrl'),
    TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TEMPORAL_TASK_QUEUE: `start-${randomUUID()}`,
    SVC_STATE_DIR: stateDir,
  };
}

/** `npm start`'s process: `bun scripts/start.ts` (role all), against the run's database and Temporal server. */
function spawnStart(stateDir: string, port: number, args: string[] = []): ChildProcess {
  return spawn(bunExecutable(), ['scripts/start.ts', ...args], {
    env: { ...platformEnv(stateDir), PORT: String(port), HOST: '127.0.0.1', KUBECONFIG: join(stateDir, 'no-kubeconfig'), SVC_BLOB_DIR: join(stateDir, 'blobs') },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, which the suite kills whole if a test fails midway.
    detached: true,
  });
}

/** Runs `bun scripts/start.ts <args>` to its end: its exit code and output. */
async function runStart(stateDir: string, port: number, args: string[] = []): Promise<{ code: number | null; output: string }> {
  const child = spawnStart(stateDir, port, args);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const [code] = await once(child, 'exit');
  return { code: code as number | null, output };
}

async function startPlatformProcess(stateDir: string, args: string[] = []): Promise<{ child: ChildProcess; url: string; port: number; output: () => string }> {
  const port = await freePort();
  const child = spawnStart(stateDir, port, args);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await until(async () => output.includes('platform ready on') || child.exitCode !== null, (done) => done);
  if (!output.includes('platform ready on')) throw new Error(`the platform did not start:\n${output}`);
  return { child, url: `http://localhost:${port}`, port, output: () => output };
}

describe('npm start (scripts/start.ts on Bun)', () => {
  let stateDir: string;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'svc-start-'));
  });
  afterAll(async () => {
    for (const child of started) killProcessGroup(child);
    await rm(stateDir, { recursive: true, force: true });
  });

  // A start, a sign-in, an execution on the worker process once it is up, and a stop: more than the default 30 s on a loaded machine.
  it('serves the edge from Bun, runs executions on a Node worker process, and stops both on SIGTERM', { timeout: 90_000 }, async () => {
    const platform = await startPlatformProcess(stateDir);
    started.push(platform.child);
    expect(platform.output()).toContain('operator:      off (no kubeconfig)');
    // Once ready, what to do next and how long it took.
    expect(platform.output()).toMatch(/platform ready on http:\/\/localhost:\d+ \(started in \d+\.\d s\)/);
    expect(platform.output()).toContain('get a token:   TOKEN=$(SVC_URL=http://localhost:');
    expect(platform.output()).toContain(`API reference: ${platform.url}/docs`);
    expect(platform.output()).toContain(`metrics:       ${platform.url}/metrics`);
    expect((await fetch(`${platform.url}/docs`)).status).toBe(200);

    const nodeRoles = childrenOf(platform.child.pid!);
    expect(nodeRoles.map((c) => c.command)).toEqual([expect.stringMatching(/^node .*\/main\.ts --role worker$/)]);

    const health = await fetch(`${platform.url}/health`);
    expect(health.status).toBe(200);
    const { accessToken } = await loginWithPkce({ issuer: platform.url, email: 'admin@acme.test' });
    const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
    // Asynchronous: the worker process may still be starting, and the execution waits for it on its task queue.
    const accepted = await fetch(`${platform.url}/api/svc/v3/orchestrate/workflows/project-briefing/execute`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ input: { question: 'Which project has the largest budget?' }, async: true }),
    });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    const done = await until(
      () => fetch(`${platform.url}/api/svc/v3/orchestrate/executions/${id}`, { headers }).then((r) => r.json() as Promise<{ state: string }>),
      (execution) => execution.state !== 'running',
    );
    expect(done).toMatchObject({ workflowId: 'project-briefing', state: 'completed' });

    const exited = once(platform.child, 'exit');
    platform.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(nodeRoles.filter((c) => alive(c.pid))).toEqual([]);
  });

  it('names the running platform on a second start, refuses --reset while it runs, and resets the local state once it has stopped', { timeout: 120_000 }, async () => {
    const own = await mkdtemp(join(tmpdir(), 'svc-start-reset-'));
    try {
      const platform = await startPlatformProcess(own);
      started.push(platform.child);
      const keys = readFileSync(join(own, 'dev-identity', 'signing-jwks.json'), 'utf8');
      mkdirSync(join(own, 'blobs'), { recursive: true });
      writeFileSync(join(own, 'blobs', 'left-over'), 'x');
      // Test servers may share a state directory: a reset leaves them, and the caches, alone.
      mkdirSync(join(own, 'pg-test'));
      mkdirSync(join(own, 'cache'));

      const second = await runStart(own, platform.port);
      expect(second.code).toBe(1);
      expect(second.output).toContain(`the platform (role all) is already running: pid ${platform.child.pid}, ${platform.url}`);
      expect(second.output).not.toMatch(/EADDRINUSE|ready on/);

      const refused = await runStart(own, await freePort(), ['--reset']);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(`cannot reset the local state while the platform runs on it: the platform (role all) is already running: pid ${platform.child.pid}`);
      expect(readFileSync(join(own, 'blobs', 'left-over'), 'utf8')).toBe('x');
      expect((await fetch(`${platform.url}/health`)).status).toBe(200);

      const exited = once(platform.child, 'exit');
      platform.child.kill('SIGTERM');
      await exited;
      const fresh = await startPlatformProcess(own, ['--reset']);
      started.push(fresh.child);
      expect(fresh.output()).toContain('reset the local state: removed');
      expect(existsSync(join(own, 'blobs', 'left-over'))).toBe(false);
      expect(readFileSync(join(own, 'dev-identity', 'signing-jwks.json'), 'utf8')).not.toBe(keys);
      expect(readdirSync(own)).toEqual(expect.arrayContaining(['pg-test', 'cache']));
      const stopped = once(fresh.child, 'exit');
      fresh.child.kill('SIGTERM');
      expect((await stopped)[0]).toBe(0);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('stops with exit code 1 when its worker process dies', async () => {
    const platform = await startPlatformProcess(stateDir);
    started.push(platform.child);
    const [worker] = childrenOf(platform.child.pid!);
    const exited = once(platform.child, 'exit');
    process.kill(worker!.pid, 'SIGKILL');
    const [code] = await exited;
    expect(code).toBe(1);
    expect(platform.output()).toContain('the worker process ended (SIGKILL); stopping the platform');
  });

  it('stops its worker process when it is itself killed without a chance to stop it', async () => {
    const platform = await startPlatformProcess(stateDir);
    started.push(platform.child);
    const [worker] = childrenOf(platform.child.pid!);
    process.kill(platform.child.pid!, 'SIGKILL');
    await until(async () => alive(worker!.pid), (running) => !running, 15_000);
  });

  it('hands a worker role started on Bun to Node, which serves its health and stops on a Ctrl-C', async () => {
    const healthPort = await freePort();
    const child = spawn(bunExecutable(), ['scripts/start.ts', '--role', 'worker'], {
      env: { ...platformEnv(stateDir), HEALTH_PORT: String(healthPort) },
      stdio: 'ignore',
      detached: true,
    });
    started.push(child);
    const health = await until(
      () => fetch(`http://127.0.0.1:${healthPort}/health`).then((r) => r.json() as Promise<{ status: string; checks: Record<string, string> }>),
      (body) => body.status === 'ok',
    );
    expect(health.checks).toMatchObject({ worker: 'running', temporal: 'ok', database: 'ok' });
    const [node] = childrenOf(child.pid!);
    expect(node?.command).toMatch(/^node .*scripts\/start\.ts --role worker$/);

    const exited = once(child, 'exit');
    // As a terminal's Ctrl-C does: SIGINT to the whole process group, so both processes get it.
    process.kill(-child.pid!, 'SIGINT');
    expect((await exited)[0]).toBe(0);
    await until(async () => alive(node!.pid), (running) => !running, 10_000);
  });

  it('runs an edge role on Bun that calls a control plane over tRPC\'s HTTP link (as the chart deploys it)', async () => {
    const edgePort = await freePort();
    const edgeUrl = `http://127.0.0.1:${edgePort}`;
    const controlPlane = await startPlatform({ role: 'control-plane', databaseUrl: inject('databaseUrl'), tenantDatabaseUrl: inject('tenantDatabaseUrl'), port: 0, publicUrl: edgeUrl, seedDevelopmentData: true });
    try {
      // The chart's sign-in key and client: what one edge pod encrypts, another decrypts.
      const signInKey = randomBytes(32);
      const child = spawn(bunExecutable(), ['scripts/start.ts', '--role', 'edge'], {
        env: {
          ...platformEnv(stateDir),
          PORT: String(edgePort),
          HOST: '127.0.0.1',
          PUBLIC_URL: edgeUrl,
          CONTROL_PLANE_URL: controlPlane.url,
          CONTROL_PLANE_TOKEN: controlPlane.controlPlaneToken!,
          SIGN_IN_KEY: signInKey.toString('base64'),
          BFF_CLIENT_ID: 'portal-bff',
          BFF_SCOPE: 'openid api',
        },
        stdio: 'ignore',
        detached: true,
      });
      started.push(child);
      await until(() => fetch(`${edgeUrl}/health`).then((r) => r.status), (status) => status === 200);
      const { accessToken } = await loginWithPkce({ issuer: edgeUrl, email: 'admin@acme.test' });
      const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
      const created = await fetch(`${edgeUrl}/api/svc/v3/resources/project`, { method: 'POST', headers, body: JSON.stringify({ name: 'Linked', budget: 10 }) });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const read = await fetch(`${edgeUrl}/api/svc/v3/resources/project/${id}`, { headers });
      expect(await read.json()).toMatchObject({ id, name: 'Linked', budget: 10, type: 'project' });
      expect(read.headers.get('x-ratelimit-limit')).toBe('1000');
      const login = await fetch(`${edgeUrl}/auth/login?returnTo=/app`, { redirect: 'manual' });
      expect(login.status).toBe(302);
      const authorize = new URL(login.headers.get('location')!);
      expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ client_id: 'portal-bff', scope: 'openid api' });
      const pending = /svc_auth_tx=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
      expect((await jwtDecrypt(pending, signInKey)).payload).toMatchObject({ returnTo: '/app', state: authorize.searchParams.get('state') });
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    } finally {
      await controlPlane.close();
    }
  });
});
