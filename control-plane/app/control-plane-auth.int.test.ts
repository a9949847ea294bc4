import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateSigningJwks } from '../../api-edge/identity/dev-provider.ts';
import { startPlatform } from './platform.ts';
import { appRouter } from './root-router.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { ADMIN, startTestStack, type TestStack } from '../../test/harness/stack.ts';
import { encodeUploadMeta, UPLOAD_META_HEADER } from '../trpc/upload-body.ts';

const TOKEN_HEADER = 'x-control-plane-token';
const IDP_APPS = '/v4/platform/provisioning/idp-apps';

/** Every file under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length)).sort();
}

/**
 * The control plane's internal port, as the chart runs it apart from the edge (the harness's `http`
 * mode): any pod of the cluster reaches it, so it answers only callers holding the edge's credential.
 */
describe('the control plane port authenticates its caller', { timeout: 120_000 }, () => {
  let stack: TestStack;
  let url: string;
  let client: { id: string; secret: string };
  let userToken: string;
  /** The built-in provider's keys, shared with a second edge below, which then accepts the stack's tokens. */
  let devSigningKeys: JSONWebKeySet;

  /** A raw tRPC call to the control plane, with the credential when given. */
  const call = (procedure: string, init: { credential?: string; headers?: Record<string, string>; body?: string; method?: string } = {}) =>
    fetch(`${url}/${procedure}`, {
      method: init.method ?? 'POST',
      headers: { ...(init.credential === undefined ? {} : { [TOKEN_HEADER]: init.credential }), ...init.headers },
      body: init.body,
      duplex: 'half',
    });
  const verifySecret = (credential?: string) =>
    call('idpApps.verifySecret', { credential, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ clientId: client.id, secret: client.secret }) });
  const upload = (credential?: string) =>
    call('uploads.put', {
      credential,
      headers: {
        authorization: `Bearer ${userToken}`,
        'x-tenant-id': 'acme',
        'content-type': 'application/octet-stream',
        [UPLOAD_META_HEADER]: encodeUploadMeta({ filename: 'planted.txt', contentType: 'text/plain' }),
      },
      body: 'stored by whoever reaches the port',
    });
  /** How many times the control plane ran `procedure`, from its own metrics. */
  const runs = async (procedure: string) => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const pattern = new RegExp(`^svc_trpc_procedure_duration_seconds_count\\{procedure="${procedure.replace('.', '\\.')}",[^}]*\\} (\\d+)$`, 'gm');
    return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
  };

  beforeAll(async () => {
    devSigningKeys = await generateSigningJwks();
    stack = await startTestStack({ controlPlane: 'http', devSigningKeys });
    url = stack.controlPlane!.url;
    userToken = await stack.token(ADMIN);
    // A real client whose secret the provider checks with scrypt.
    const acmeId = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: { slug: string }) => t.slug === 'acme').id;
    const appKey = `port-${Date.now().toString(36)}`;
    expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/apps`, { as: ADMIN, body: { name: 'Port check', key: appKey } })).status).toBe(201);
    const created = await stack.request('POST', IDP_APPS, { as: ADMIN, body: { tenant_id: 'acme', appKey, displayName: 'Port check', redirectUris: ['https://port.example.test/cb'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    client = { id: created.body.clientId, secret: created.body.clientSecret };
  });
  afterAll(() => stack?.close());

  it('refuses a call without the credential, or with a wrong one, with 401, and runs nothing', async () => {
    const checksBefore = await runs('idpApps.verifySecret');
    const uploadsBefore = await runs('uploads.put');
    const filesBefore = await filesUnder(stack.blobRoot);
    const wrong = 'x'.repeat(44);
    for (const credential of [undefined, '', wrong, `${stack.controlPlane!.token}x`]) {
      for (const response of [await verifySecret(credential), await upload(credential)]) {
        expect(response.status, `credential ${JSON.stringify(credential)}`).toBe(401);
        expect(await response.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.stringMatching(/edge/) } });
      }
    }
    // A batch that starts with the open health check does not carry another procedure past the check.
    const batch = await call('health.check,idpApps.verifySecret?batch=1', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ 1: { clientId: client.id, secret: client.secret } }) });
    expect(batch.status).toBe(401);
    // The scrypt check never ran, and nothing was stored.
    expect(await runs('idpApps.verifySecret')).toBe(checksBefore);
    expect(await runs('uploads.put')).toBe(uploadsBefore);
    expect(await filesUnder(stack.blobRoot)).toEqual(filesBefore);
  });

  it('refuses every procedure of the router without the credential, by GET and by POST, and runs none', async () => {
    const procedures = Object.keys(appRouter._def.procedures).filter((name) => name !== 'health.check');
    expect(procedures.length).toBeGreaterThan(100);
    const allRuns = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return [...text.matchAll(/^svc_trpc_procedure_duration_seconds_count\{procedure="(?!health\.check")[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    const before = await allRuns();
    for (const procedure of procedures) {
      const byGet = await call(`${procedure}?input=${encodeURIComponent('{}')}`, { method: 'GET', headers: { authorization: `Bearer ${userToken}`, 'x-tenant-id': 'acme' } });
      const byPost = await call(procedure, { headers: { authorization: `Bearer ${userToken}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' }, body: '{}' });
      expect([byGet.status, byPost.status], procedure).toEqual([401, 401]);
    }
    expect(await allRuns()).toBe(before);
  });

  it('answers the edge\u2019s credential', async () => {
    const credential = stack.controlPlane!.token!;
    expect(credential.length).toBeGreaterThanOrEqual(32);
    const checksBefore = await runs('idpApps.verifySecret');
    const checked = await verifySecret(credential);
    expect(checked.status).toBe(200);
    expect(await checked.json()).toEqual({ result: { data: true } });
    expect(await runs('idpApps.verifySecret')).toBe(checksBefore + 1);

    const filesBefore = await filesUnder(stack.blobRoot);
    const stored = await upload(credential);
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as { result: { data: unknown } }).result.data).toMatchObject({ size: 34, filename: 'planted.txt' });
    expect((await filesUnder(stack.blobRoot)).length).toBe(filesBefore.length + 1);

    // And the edge, which holds it, serves its routes through the port.
    expect((await stack.request('GET', '/v4/identity/me', { as: ADMIN })).status).toBe(200);
  });

  it('keeps an edge with another credential out of service: not ready, and no call runs', async () => {
    // It serves the stack's origin (the tokens' issuer) on a port of its own.
    const port = await freePort();
    const stray = await startPlatform({ role: 'edge', databaseUrl: inject('databaseUrl'), port, publicUrl: stack.url, devSigningKeys, controlPlaneUrl: url, controlPlaneToken: 'y'.repeat(44) });
    const strayUrl = `http://127.0.0.1:${port}`;
    try {
      const health = await fetch(`${strayUrl}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'unavailable', checks: { controlPlane: 'unreachable' } });
      const read = await fetch(`${strayUrl}/v4/identity/me`, { headers: { authorization: `Bearer ${userToken}` } });
      expect(read.status).toBe(500);
    } finally {
      await stray.close();
    }
  });

  it('keeps the probe and the metrics open: GET /health.check and GET /metrics need no credential', async () => {
    const health = await fetch(`${url}/health.check`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { result: { data: { status: string } } }).result.data.status).toBe('ok');
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('svc_trpc_procedure_duration_seconds');
  });
});
