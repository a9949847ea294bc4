import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthService } from './health.service.ts';

const PROBE_PATHS = new Set(['/health/live', '/health/ready']);

/** Whether `req` is a probe of the control plane's port that kubelet sends without credentials. */
export const isProbeRequest = (req: IncomingMessage) => req.method === 'GET' && PROBE_PATHS.has(req.url?.split('?')[0] ?? '');

/**
 * The control plane's probes: `GET /health/live` is 200 while the process answers, whatever the
 * database does (liveness: an outage must not restart every pod); `GET /health/ready` is 200 when
 * the database answers, else 503 (readiness: the edge's calls go to pods that can serve them).
 */
export async function answerProbe(req: IncomingMessage, res: ServerResponse, health: HealthService): Promise<void> {
  const live = req.url?.split('?')[0] === '/health/live';
  const report = live ? { status: 'ok' as const } : await health.check();
  const body = JSON.stringify(report);
  res.writeHead(report.status === 'ok' ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
