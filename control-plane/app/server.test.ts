import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createEdgeApp } from '../../api-edge/app.ts';
import { createHttpControlPlane } from '../../api-edge/control-plane-http.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { createControlPlaneServer } from './server.ts';
import { apiServicesOf, createServices } from './services.ts';
import { generateControlPlaneToken } from './control-plane-token.ts';

/** The control plane's own process answers its health check with a status code probes can read. */
describe('control plane server health', () => {
  const blobRoot = mkdtempSync(join(tmpdir(), 'cp-health-'));
  const dbs: Db[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    rmSync(blobRoot, { recursive: true, force: true });
  });

  /** GET /health.check of a control plane on `databaseUrl`, and GET /health of an edge that reaches it over HTTP. */
  async function healthOf(databaseUrl: string): Promise<{ status: number; body: any; edge: { status: number; body: any } }> {
    const db = createDb(databaseUrl, { max: 1, systemMax: 1, readConnections: 1 });
    dbs.push(db);
    const callerToken = generateControlPlaneToken();
    const server = createControlPlaneServer({ services: apiServicesOf(createServices({ db, blobs: createLocalDirectoryBlobStore(blobRoot) })), verifyToken: () => Promise.reject(new Error('no tokens here')), callerToken });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const response = await fetch(`${url}/health.check`);
      const edge = createEdgeApp({
        controlPlane: createHttpControlPlane(url, callerToken),
        verifyToken: () => Promise.reject(new Error('no tokens here')),
        rateLimit: () => Promise.reject(new Error('health is not rate-limited')),
      });
      const edgeResponse = await edge.handle(new Request('http://edge.test/health'));
      return { status: response.status, body: await response.json(), edge: { status: edgeResponse.status, body: await edgeResponse.json() } };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('answers 200 while its database answers, and 503 naming the database when it does not', async () => {
    expect(await healthOf(inject('databaseUrl'))).toEqual({
      status: 200,
      body: { result: { data: { status: 'ok', checks: { database: 'ok' } } } },
      edge: { status: 200, body: { status: 'ok', checks: { database: 'ok' } } },
    });
    // A port nothing listens on: the edge, which reaches the control plane, names the database too.
    expect(await healthOf('postgres://svc@127.0.0.1:1/svc')).toEqual({
      status: 503,
      body: { result: { data: { status: 'unavailable', checks: { database: 'unreachable' } } } },
      edge: { status: 503, body: { status: 'unavailable', checks: { database: 'unreachable' } } },
    });
  });
});
