import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, string>;
}

/**
 * `GET /health` for the roles that serve no other HTTP (worker, operator): 200 with the report
 * when every check passes, 503 otherwise; anything else is 404. Probes and people read the same body.
 */
export async function startHealthServer(options: { host: string; port: number; report(): Promise<HealthReport> }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/health') {
      reply(404, { error: { code: 'NOT_FOUND', message: 'only GET /health is served here' } });
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
