import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHealthServer } from './health-server.ts';

describe('health server', () => {
  let both: Awaited<ReturnType<typeof startHealthServer>>;
  let metricsOnly: Awaited<ReturnType<typeof startHealthServer>>;
  beforeAll(async () => {
    both = await startHealthServer({ host: '127.0.0.1', port: 0, report: async () => ({ status: 'ok', checks: { database: 'ok' } }), metrics: true });
    metricsOnly = await startHealthServer({ host: '127.0.0.1', port: 0, metrics: true });
  });
  afterAll(async () => {
    await both?.close();
    await metricsOnly?.close();
  });

  it('serves /health and /metrics (Prometheus text) on one port', async () => {
    expect((await fetch(`${both.url}/health`)).status).toBe(200);
    const metrics = await fetch(`${both.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await metrics.text()).toContain('# TYPE svc_workflow_starts_total counter');
  });

  it('serves only /metrics on a metrics port', async () => {
    expect((await fetch(`${metricsOnly.url}/metrics`)).status).toBe(200);
    const health = await fetch(`${metricsOnly.url}/health`);
    expect(health.status).toBe(404);
    expect(((await health.json()) as { error: { message: string } }).error.message).toBe('only GET /metrics is served here');
  });
});
