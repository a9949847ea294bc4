import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLocalDirectoryBlobStore } from './blobs/local-directory.ts';
import { createDb, type Db } from './db/client.ts';
import { createControlPlaneServer } from './server.ts';
import { createServices } from './services.ts';

/** The control plane's own process answers its health check with a status code probes can read. */
describe('control plane server health', () => {
  const blobRoot = mkdtempSync(join(tmpdir(), 'cp-health-'));
  const dbs: Db[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    rmSync(blobRoot, { recursive: true, force: true });
  });

  async function healthOf(databaseUrl: string): Promise<{ status: number; body: any }> {
    const db = createDb(databaseUrl, { max: 1, systemMax: 1, readConnections: 1 });
    dbs.push(db);
    const server = createControlPlaneServer({ services: createServices({ db, blobs: createLocalDirectoryBlobStore(blobRoot) }), verifyToken: () => Promise.reject(new Error('no tokens here')) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health.check`);
      return { status: response.status, body: await response.json() };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('answers 200 while its database answers, and 503 naming the database when it does not', async () => {
    expect(await healthOf(inject('databaseUrl'))).toEqual({ status: 200, body: { result: { data: { status: 'ok', checks: { database: 'ok' } } } } });
    // A port nothing listens on.
    expect(await healthOf('postgres://svc@127.0.0.1:1/svc')).toEqual({
      status: 503,
      body: { result: { data: { status: 'unavailable', checks: { database: 'unreachable' } } } },
    });
  });
});
