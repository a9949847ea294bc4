import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsText } from '../telemetry/metrics.ts';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, string>;
}

/**
 * `GET /health` for the roles that serve no other HTTP (worker, operator): 200 with the report
 * when every check passes, 503 otherwise (the readiness probe's path). `GET /health/live`, the
 * liveness probe's, is 200 while the process serves at all: a database or Temporal outage makes
 * the role unready, never restarted. With `metrics`, `GET /metrics` too: the process's
 * metrics in Prometheus text format. Anything else is 404. Probes and people read the same body.
 * Without `report`, only the metrics are served (the port `METRICS_PORT` names).
 */
export async function startHealthServer(options: { host: string; port: number; report?(): Promise<HealthReport>; metrics?: boolean }): Promise<{ url: string; close(): Promise<void> }> {
  const served = [options.report && 'GET /health, GET /health/live', options.metrics && 'GET /metrics'].filter(Boolean).join(' and ');
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/metrics' && options.metrics) {
      metricsText().then(
        ({ contentType, body }) => {
          response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
          response.end(body);
        },
        () => reply(500, { error: { code: 'INTERNAL_ERROR', message: 'metrics unavailable' } }),
      );
      return;
    }
    if (request.method === 'GET' && path === '/health/live' && options.report) return reply(200, { status: 'ok' });
    if (request.method !== 'GET' || path !== '/health' || !options.report) {
      reply(404, { error: { code: 'NOT_FOUND', message: `only ${served} ${served.includes(' and ') ? 'are' : 'is'} served here` } });
      return;
    }
    options.report().then(
      (report) => reply(report.status === 'ok' ? 200 : 503, report),
      () => reply(503, { status: 'unavailable', checks: {} }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host === '0.0.0.0' ? 'localhost' : options.host}:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
