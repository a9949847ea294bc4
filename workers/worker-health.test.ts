import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startPlatform, type RunningPlatform } from '../control-plane/app/platform.ts';

const get = async (url: string, method = 'GET') => {
  const response = await fetch(url, { method });
  return { status: response.status, body: await response.json() };
};

/** The worker role serves GET /health (HEALTH_PORT): its own state, Temporal's and the database's. */
describe('worker health', () => {
  const started: RunningPlatform[] = [];
  const startWorker = (databaseUrl: string) =>
    startPlatform({
      role: 'worker',
      databaseUrl,
      port: 0,
      healthPort: 0,
      temporal: { address: inject('temporalAddress'), namespace: inject('temporalNamespace'), taskQueue: `health-${randomUUID()}` },
    }).then((platform) => (started.push(platform), platform));
  afterAll(async () => {
    for (const platform of started) await platform.close();
  });

  it('answers 200 while it polls Temporal and reaches the database; only GET /health is served', async () => {
    const worker = await startWorker(inject('databaseUrl'));
    expect(await get(`${worker.url}/health`)).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', worker: 'running', temporal: 'ok' } } });
    expect((await get(`${worker.url}/health`, 'POST')).status).toBe(404);
    expect((await get(`${worker.url}/`)).status).toBe(404);
  }, 60_000);

  it('answers 503 and names the check when the database is unreachable', async () => {
    const worker = await startWorker('postgres://svc@127.0.0.1:1/unreachable');
    expect(await get(`${worker.url}/health`)).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'unreachable', worker: 'running', temporal: 'ok' } } });
  }, 60_000);
});
