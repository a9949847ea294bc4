import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { devSecretsKey } from './control-plane/app/dev-secrets-key.ts';
import { killProcessGroup } from './test/harness/process-group.ts';
import { until } from './test/harness/until.ts';
import { freePort } from './scripts/stack/process.ts';

/** The environment without any of the platform's settings, so that only those a test gives apply. */
function bareEnv(stateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, SVC_STATE_DIR: stateDir, SVC_CACHE_DIR: join(stateDir, 'cache'), KUBECONFIG: join(stateDir, 'no-kubeconfig') };
  return env;
}

/** `node --import tsx main.ts <args>`, as the image runs it; its output is collected. */
function runMain(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn('node', ['--import', 'tsx', 'main.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

describe('main.ts (the production entry point)', () => {
  let stateDir: string;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'svc-main-'));
  });
  afterAll(async () => {
    for (const child of started) killProcessGroup(child);
    await rm(stateDir, { recursive: true, force: true });
  });

  it('exits with code 2 and says what is missing when DATABASE_URL is not set, starting nothing', async () => {
    const run = runMain([], bareEnv(stateDir));
    started.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/^DATABASE_URL is required: the PostgreSQL URL/);
    expect(run.output()).not.toMatch(/\[postgres\]|\[temporal\]|ready/);
    expect(readdirSync(stateDir)).toEqual([]);
  });

  it('exits with code 2 on an unknown role', async () => {
    const run = runMain(['--role', 'scheduler'], { ...bareEnv(stateDir), DATABASE_URL: inject('databaseUrl') });
    started.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('unknown role "scheduler": use all, edge, control-plane, worker or operator');
  });

  it('fails clearly when DATABASE_URL names a closed port, without installing or starting PostgreSQL or Temporal', async () => {
    const port = await freePort();
    const run = runMain([], { ...bareEnv(stateDir), DATABASE_URL: `postgres://svc:hunter2@127.0.0.1:${port}/svc` });
    started.push(run.child);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`cannot start role all: cannot reach PostgreSQL at postgres://svc:***@127.0.0.1:${port}/svc (ECONNREFUSED)`);
    expect(run.output()).not.toContain('hunter2');
    expect(run.output()).not.toMatch(/\[postgres\]|\[temporal\]|initdb|apt-get/);
    // The local services' state (a cluster, a dev server's files) would be in the state directory.
    expect(readdirSync(stateDir)).toEqual([]);
  });

  it('refuses to start in production without an external identity provider, serving and seeding nothing', { timeout: 90_000 }, async () => {
    await Promise.all(
      ['all', 'edge', 'control-plane'].map(async (role) => {
        const port = await freePort();
        const run = runMain(['--role', role], { ...bareEnv(stateDir), NODE_ENV: 'production', DATABASE_URL: inject('databaseUrl'), HOST: '127.0.0.1', PORT: String(port) });
        started.push(run.child);
        expect(await run.exited).toBe(2);
        expect(run.output()).toContain('AUTH_ISSUER and AUTH_JWKS_URL are required in production');
        expect(run.output()).not.toMatch(/listening|ready/);
        await expect(fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`)).rejects.toThrow();
      }),
    );
  });

  it('exits with code 2 on a DEFAULT_PLAN that is not a plan', async () => {
    const run = runMain([], { ...bareEnv(stateDir), DATABASE_URL: inject('databaseUrl'), DEFAULT_PLAN: 'platinum' });
    started.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('DEFAULT_PLAN must be one of free, team, enterprise, not "platinum"');
  });

  it('refuses half an identity provider setting instead of falling back to the built-in sign-in', async () => {
    const run = runMain([], { ...bareEnv(stateDir), DATABASE_URL: inject('databaseUrl'), AUTH_ISSUER: 'https://id.example' });
    started.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('AUTH_JWKS_URL must be set with AUTH_ISSUER');
  });

  it('refuses an AUTH_TOKENS_WITHOUT_CLIENT other than refuse or first-party', { timeout: 90_000 }, async () => {
    const run = runMain([], { ...bareEnv(stateDir), DATABASE_URL: inject('databaseUrl'), AUTH_ISSUER: 'https://id.example', AUTH_JWKS_URL: 'https://id.example/jwks', AUTH_TOKENS_WITHOUT_CLIENT: 'allow' });
    started.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('AUTH_TOKENS_WITHOUT_CLIENT must be "refuse" or "first-party", not "allow"');
  });

  it('exits with code 2 in production when SECRETS_KEY is missing or malformed, or SECRETS_KEY_PREVIOUS is malformed or alone, for a role that serves the API', { timeout: 90_000 }, async () => {
    const production = { ...bareEnv(stateDir), NODE_ENV: 'production', DATABASE_URL: inject('databaseUrl'), AUTH_ISSUER: 'http://127.0.0.1:1', AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks', AUTH_FIRST_PARTY_CLIENTS: 'svc-cli', CONTROL_PLANE_TOKEN: randomBytes(32).toString('base64') };
    const cases = [
      ['control-plane', production, 'SECRETS_KEY is required for role control-plane in production: 32 bytes, base64-encoded'],
      ['all', { ...production, SECRETS_KEY: randomBytes(16).toString('base64') }, 'SECRETS_KEY must be 32 bytes, base64-encoded'],
      ['all', { ...production, SECRETS_KEY: randomBytes(32).toString('base64'), SECRETS_KEY_PREVIOUS: randomBytes(16).toString('base64') }, 'SECRETS_KEY_PREVIOUS holds a key (number 1) that is not 32 bytes'],
      ['all', { ...production, SECRETS_KEY_PREVIOUS: randomBytes(32).toString('base64') }, 'SECRETS_KEY_PREVIOUS needs SECRETS_KEY'],
    ] as const;
    await Promise.all(
      cases.map(async ([role, env, message]) => {
        const run = runMain(['--role', role], env);
        started.push(run.child);
        expect(await run.exited).toBe(2);
        expect(JSON.parse(run.output().trim())).toMatchObject({ level: 50, msg: expect.stringContaining(message) });
      }),
    );
    expect(readdirSync(stateDir)).toEqual([]);
  });

  it('refuses to run the control-plane role in production without the credential of its port, with one line and exit code 2', async () => {
    const port = await freePort();
    const production = { ...bareEnv(stateDir), NODE_ENV: 'production', DATABASE_URL: inject('databaseUrl'), HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: 'http://127.0.0.1:1', SVC_DEV_SEED: 'false', AUTH_ISSUER: 'http://127.0.0.1:1', AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks', AUTH_FIRST_PARTY_CLIENTS: 'svc-cli', SECRETS_KEY: randomBytes(32).toString('base64') };
    const missing = runMain(['--role', 'control-plane'], production);
    started.push(missing.child);
    expect(await missing.exited).toBe(2);
    expect(missing.output().trim().split('\n')).toHaveLength(1);
    expect(missing.output()).toContain('CONTROL_PLANE_TOKEN is required for the control-plane role in production');
    const short = runMain(['--role', 'control-plane'], { ...production, CONTROL_PLANE_TOKEN: 'secret' });
    started.push(short.child);
    expect(await short.exited).toBe(2);
    expect(short.output()).toContain('CONTROL_PLANE_TOKEN must be at least 32 bytes');
    // An edge pointed at a control plane cannot call it without the credential, in any mode.
    const edge = runMain(['--role', 'edge'], { ...bareEnv(stateDir), DATABASE_URL: inject('databaseUrl'), CONTROL_PLANE_URL: `http://127.0.0.1:${port}` });
    started.push(edge.child);
    expect(await edge.exited).toBe(2);
    expect(edge.output()).toContain('CONTROL_PLANE_TOKEN is required with CONTROL_PLANE_URL');
  }, 90_000); // three processes start one after another

  it('refuses to start in production with an external provider but no AUTH_FIRST_PARTY_CLIENTS, for a role that serves the API', { timeout: 90_000 }, async () => {
    const production = { ...bareEnv(stateDir), NODE_ENV: 'production', DATABASE_URL: inject('databaseUrl'), HOST: '127.0.0.1', AUTH_ISSUER: 'http://127.0.0.1:1', AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks', CONTROL_PLANE_TOKEN: randomBytes(32).toString('base64'), SECRETS_KEY: randomBytes(32).toString('base64') };
    const cases = [
      ['control-plane', {}, 'AUTH_FIRST_PARTY_CLIENTS is required with AUTH_ISSUER in production'],
      ['all', { AUTH_FIRST_PARTY_CLIENTS: ' , ' }, 'AUTH_FIRST_PARTY_CLIENTS is required with AUTH_ISSUER in production'],
      ['all', { AUTH_FIRST_PARTY_CLIENTS: '*,svc-cli' }, 'AUTH_FIRST_PARTY_CLIENTS is "*" alone or a list of client ids'],
    ] as const;
    await Promise.all(
      cases.map(async ([role, extra, message]) => {
        const port = await freePort();
        const run = runMain(['--role', role], { ...production, ...extra, PORT: String(port) });
        started.push(run.child);
        expect(await run.exited).toBe(2);
        expect(JSON.parse(run.output().trim())).toMatchObject({ level: 50, msg: expect.stringContaining(message) });
        await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
      }),
    );
  });

  it('sets Secure __Host- cookies in production whatever the scheme of PUBLIC_URL, and says that browser sign-in needs https', { timeout: 90_000 }, async () => {
    // A provider that answers discovery alone: the sign-in's first step needs nothing more.
    const provider = createServer((request, response) => {
      const issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
      if (request.url !== '/.well-known/openid-configuration') return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'] }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
      const port = await freePort();
      const run = runMain(['--role', 'all'], {
        ...bareEnv(stateDir),
        NODE_ENV: 'production',
        DATABASE_URL: inject('databaseUrl'),
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: 'http://platform.example.test',
        AUTH_ISSUER: issuer,
        AUTH_JWKS_URL: `${issuer}/jwks`,
        AUTH_FIRST_PARTY_CLIENTS: 'svc-cli',
        SVC_DEV_SEED: 'false',
        SECRETS_KEY: devSecretsKey().toString('base64'),
      });
      started.push(run.child);
      await until(async () => run.output().includes('platform ready') || run.child.exitCode !== null, (done) => done);
      expect(run.output()).toContain('PUBLIC_URL http://platform.example.test is not https: browser sign-in needs https');
      const login = await fetch(`http://127.0.0.1:${port}/auth/login`, { redirect: 'manual' });
      expect(login.status).toBe(302);
      expect(login.headers.get('set-cookie')).toMatch(/^__Host-svc_auth_tx=[^;]+;.*Path=\/;.*Secure/);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      provider.close();
    }
  });

  it('runs the control-plane role from the environment, logs JSON lines in production, and stops on SIGTERM', async () => {
    const port = await freePort();
    const controlPlaneToken = randomBytes(32).toString('base64');
    const run = runMain(['--role', 'control-plane'], {
      ...bareEnv(stateDir),
      NODE_ENV: 'production',
      CONTROL_PLANE_TOKEN: controlPlaneToken,
      DATABASE_URL: inject('databaseUrl'),
      TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: 'http://127.0.0.1:1',
      AUTH_ISSUER: 'http://127.0.0.1:1',
      AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks',
      AUTH_FIRST_PARTY_CLIENTS: 'svc-cli',
      SVC_DEV_SEED: 'false',
      // The run's key: production refuses to start when stored secrets are sealed under a key it lacks.
      SECRETS_KEY: devSecretsKey().toString('base64'),
    });
    started.push(run.child);
    await until(async () => run.output().includes('listening') || run.child.exitCode !== null, (done) => done);
    const lines = run.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ level: 30, role: 'control-plane', msg: `control plane (tRPC) listening on http://127.0.0.1:${port}; point the edge at it with CONTROL_PLANE_URL=http://127.0.0.1:${port}` });
    const health = await fetch(`http://127.0.0.1:${port}/health.check`);
    expect(health.status).toBe(200);
    // The credential it was given is never logged.
    expect(run.output()).not.toContain(controlPlaneToken);
    // Only the probe is open: the same procedure called as the edge calls it needs the credential.
    const asEdge = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${port}/health.check`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });
    expect((await asEdge({})).status).toBe(401);
    expect((await asEdge({ 'x-control-plane-token': controlPlaneToken })).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});
