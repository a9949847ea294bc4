import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { decodeProtectedHeader } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { killProcessGroup } from '../../test/harness/process-group.ts';
import { newSecretsKey, secretsKeyIdOf } from '../secrets/secret-box.ts';
import { webhookSignature } from '../webhooks/webhook-signature.ts';
import { migrate } from './migrate.ts';
import { startPlatform, type RunningPlatform } from './platform.ts';
import { UnreadableSecretsError } from './stored-secrets.ts';

const ADMIN = 'admin@acme.test';

/**
 * The operator changes SECRETS_KEY: values sealed under the old key are read and sealed again
 * under the new one while the old key is given as SECRETS_KEY_PREVIOUS, and keep working once it
 * is gone; production refuses to start with secrets no key it was given opens. Through HTTP
 * against the whole platform, in a database of this file's own: its keys are not the run's.
 */
describe('changing SECRETS_KEY', { timeout: 180_000 }, () => {
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const database = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(inject('databaseUrl')), { pathname: `/${database}` }).toString();
  const tenantDatabaseUrl = Object.assign(new URL(inject('tenantDatabaseUrl')), { pathname: `/${database}` }).toString();
  const [keyA, keyB, keyC] = [newSecretsKey(), newSecretsKey(), newSecretsKey()];
  const [idA, idB] = [secretsKeyIdOf(keyA), secretsKeyIdOf(keyB)];
  let sql: postgres.Sql;
  let blobRoot: string;
  let platform: RunningPlatform | undefined;
  const logs: string[] = [];
  const tokens = new Map<string, string>();
  let acmeId: string;
  let webhookSecret: string;
  const configSecret = `cfg-${randomBytes(12).toString('hex')}`;

  async function start(secretsKey: Uint8Array, previousSecretsKeys: Uint8Array[] = []): Promise<RunningPlatform> {
    tokens.clear();
    platform = await startPlatform({
      role: 'all',
      databaseUrl,
      tenantDatabaseUrl,
      blobRoot,
      port: 0,
      seedDevelopmentData: true,
      secretsKey,
      previousSecretsKeys,
      temporal: { address: inject('temporalAddress'), namespace: inject('temporalNamespace'), taskQueue: `test-${randomUUID()}` },
      runWorker: false,
      rateLimits: { keyPrefix: `test-${randomUUID()}` },
      log: (message) => logs.push(message),
    });
    return platform;
  }
  async function stop(): Promise<void> {
    await platform?.close();
    platform = undefined;
  }
  async function request(method: string, path: string, options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; auth?: boolean } = {}) {
    if (options.auth !== false && !tokens.has(ADMIN)) tokens.set(ADMIN, (await loginWithPkce({ issuer: platform!.url, email: ADMIN })).accessToken);
    const response = await fetch(platform!.url + path, {
      method,
      headers: {
        ...(options.auth === false ? {} : { authorization: `Bearer ${tokens.get(ADMIN)}` }),
        ...(options.body !== undefined || options.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
  const deliver = (payload: string) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    return request('POST', `/v4/webhooks/${acmeId}/keys`, {
      rawBody: payload,
      auth: false,
      headers: { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': `sha256=${webhookSignature(webhookSecret, timestamp, Buffer.from(payload))}` },
    });
  };
  const revealedConfig = async () => (await request('GET', `/v4/platform/config/${acmeId}/shop/dev?include_secrets=true`)).body.data.find((e: any) => e.key === 'TOKEN')?.value;
  /** The key ids the stored secrets are sealed under (webhook, configuration, realtime signing keys). */
  const storedKeyIds = async () => {
    const rows = await sql<{ value: string }[]>`
      select secret as value from webhook_endpoints union all select previous_secret from webhook_endpoints where previous_secret is not null
      union all select sealed_value from config_entries where secret union all select sealed_secret from realtime_signing_keys`;
    return new Set(rows.map((r) => r.value.split(':')[2]));
  };
  /** Opens a realtime connection with a negotiated URL; its first event's name. */
  async function connectOnce(url: string): Promise<{ status: number; first?: EventSourceMessage }> {
    const abort = new AbortController();
    const { pathname, search } = new URL(url);
    const response = await fetch(`${platform!.url}${pathname}${search}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    if (response.status !== 200) return { status: response.status };
    const first = await new Promise<EventSourceMessage>((resolve) => {
      const parser = createParser({ onEvent: resolve });
      void (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        } catch {
          // aborted below
        }
      })();
    });
    abort.abort();
    return { status: 200, first };
  }

  beforeAll(async () => {
    await admin.unsafe(`create database ${database}`);
    const asAdmin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    for (const { extname } of await admin<{ extname: string }[]>`select extname from pg_extension where extname <> 'plpgsql'`) await asAdmin.unsafe(`create extension if not exists "${extname}"`);
    await asAdmin.end();
    await migrate(databaseUrl);
    sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    blobRoot = await mkdtemp(join(tmpdir(), 'svc-blobs-'));
  }, 120_000);
  afterAll(async () => {
    await stop();
    await sql?.end();
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.end();
    if (blobRoot) await rm(blobRoot, { recursive: true, force: true });
  });

  it('reads and seals again under the new key what the old one sealed, while the old key is given as SECRETS_KEY_PREVIOUS, and works without it afterwards', async () => {
    // Key A seals a webhook secret, a configuration secret and the realtime signing key.
    await start(keyA);
    acmeId = (await request('GET', '/v4/identity/tenants')).body.data.find((t: any) => t.slug === 'acme').id;
    const endpoint = await request('POST', `/v4/webhooks/${acmeId}/endpoints`, { body: { source: 'keys', workflowId: 'active-projects' } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    webhookSecret = endpoint.body.secret;
    expect((await request('PUT', `/v4/platform/config/${acmeId}/shop/dev/TOKEN`, { body: { value: configSecret, secret: true } })).status).toBe(201);
    const negotiated = await request('POST', '/v4/realtime/negotiate', { body: { tenant_id: acmeId, channels: ['resources'] } });
    expect(negotiated.status, JSON.stringify(negotiated.body)).toBe(200);
    expect((await deliver('{"n":1}')).status).toBe(202);
    expect(await storedKeyIds()).toEqual(new Set([idA]));
    await stop();

    // Key B, with A as the previous key: everything opens, and is sealed under B at start.
    await start(keyB, [keyA]);
    expect(await storedKeyIds()).toEqual(new Set([idB]));
    expect(logs.some((line) => line.includes(`under SECRETS_KEY (key id ${idB})`))).toBe(true);
    expect((await deliver('{"n":2}')).status).toBe(202);
    expect(await revealedConfig()).toBe(configSecret);
    // The token key A's process issued still opens its one connection: the signing key it names was sealed again, not replaced.
    const connected = await connectOnce(negotiated.body.url);
    expect(connected.status).toBe(200);
    expect(connected.first?.event).toBe('ready');
    await stop();

    // Key B alone: still all readable.
    await start(keyB);
    expect((await deliver('{"n":3}')).status).toBe(202);
    expect(await revealedConfig()).toBe(configSecret);
    const again = await request('POST', '/v4/realtime/negotiate', { body: { tenant_id: acmeId, channels: ['resources'] } });
    expect(decodeProtectedHeader(again.body.token).kid).toBe(decodeProtectedHeader(negotiated.body.token).kid);
    expect((await connectOnce(again.body.url)).status).toBe(200);
    // A wrongly signed delivery is still refused: the secret was not lost on the way.
    expect((await request('POST', `/v4/webhooks/${acmeId}/keys`, { rawBody: '{}', auth: false, headers: { 'x-webhook-timestamp': '1', 'x-webhook-signature': 'sha256=00' } })).status).toBe(401);
    await stop();
  });

  it('refuses to start in production with secrets sealed under a key it was not given, naming the key ids; elsewhere it starts and says so', async () => {
    logs.length = 0;
    await expect(
      startPlatform({ role: 'all', databaseUrl, tenantDatabaseUrl, blobRoot, port: 0, secretsKey: keyC, previousSecretsKeys: [keyA], refuseUnreadableSecrets: true, log: () => {} }),
    ).rejects.toThrow(UnreadableSecretsError);
    // Nothing was changed by the refused start.
    expect(await storedKeyIds()).toEqual(new Set([idB]));

    await start(keyC);
    expect(logs.find((line) => line.includes('stored secrets are sealed under keys this process was not given'))).toContain(`under key id ${idB}`);
    expect((await request('GET', `/v4/platform/config/${acmeId}/shop/dev?include_secrets=true`)).status).toBeGreaterThanOrEqual(500);
    await stop();

    // main.ts in production: one line naming the keys, exit code 1, nothing listening.
    const stateDir = await mkdtemp(join(tmpdir(), 'svc-main-'));
    const port = await freePort();
    const child = spawn('node', ['--import', 'tsx', 'main.ts', '--role', 'control-plane'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SVC_STATE_DIR: stateDir,
        SVC_CACHE_DIR: join(stateDir, 'cache'),
        KUBECONFIG: join(stateDir, 'no-kubeconfig'),
        NODE_ENV: 'production',
        DATABASE_URL: databaseUrl,
        TENANT_DATABASE_URL: tenantDatabaseUrl,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: 'http://127.0.0.1:1',
        AUTH_ISSUER: 'http://127.0.0.1:1',
        AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks',
        AUTH_FIRST_PARTY_CLIENTS: 'svc-cli',
        SVC_DEV_SEED: 'false',
        CONTROL_PLANE_TOKEN: randomBytes(32).toString('base64'),
        SECRETS_KEY: keyC.toString('base64'),
        SECRETS_KEY_PREVIOUS: keyA.toString('base64'),
      },
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      const lines = output.trim().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string });
      const refusal = lines.find((line) => line.level === 50);
      expect(refusal?.msg).toContain(`cannot start role control-plane: stored secrets are sealed under keys this process was not given (`);
      expect(refusal?.msg).toContain(`under key id ${idB}`);
      expect(refusal?.msg).toContain(`SECRETS_KEY (key id ${secretsKeyIdOf(keyC)}) and SECRETS_KEY_PREVIOUS (key id ${idA})`);
      expect(output).not.toContain('listening');
    } finally {
      killProcessGroup(child);
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
