import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { Health } from '../health/health.schema.ts';
import { answerProbe, isProbeRequest } from '../health/probes.ts';
import type { Identity } from '../identity/identity.schema.ts';
import type { Context } from '../trpc/context.ts';
import { metricsText } from '../telemetry/metrics.ts';
import { parseTraceparent, requestIdFrom } from '../telemetry/trace-context.ts';
import { CONTROL_PLANE_TOKEN_HEADER, controlPlaneTokenCheck, controlPlaneTokenProblem } from './control-plane-token.ts';
import { appRouter } from './root-router.ts';
import type { NarrowApiServices } from './services.ts';
import { decodeUploadMeta, nodeByteStream, UPLOAD_META_HEADER } from '../trpc/upload-body.ts';

const BEARER = /^Bearer\s+(\S+)$/i;

/** `GET /metrics`: the process's metrics in Prometheus text format. */
async function serveMetrics(res: ServerResponse): Promise<void> {
  try {
    const { contentType, body } = await metricsText();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(body);
  } catch {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('metrics unavailable');
  }
}

/** The tenant the edge names, percent-encoded (a value that does not decode names no tenant anyone belongs to). */
function decodeTenantHint(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** The health probe, which kubelet sends without credentials; it runs only `health.check`. */
const isProbe = (req: IncomingMessage) => req.method === 'GET' && req.url?.split('?')[0] === '/health.check';

/** 401 before anything runs: the body is not read, and the connection closes after the answer. */
function refuseCaller(res: ServerResponse): void {
  const body = JSON.stringify({ error: { code: 'UNAUTHORIZED', message: `this port answers the platform's edge only: the ${CONTROL_PLANE_TOKEN_HEADER} header is missing or wrong` } });
  res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

const isUpload = (req: IncomingMessage) => req.method === 'POST' && /^application\/octet-stream\s*(;|$)/i.test(header(req, 'content-type') ?? '');

/**
 * The control plane as its own process, reached over tRPC's HTTP link. Every call must carry the
 * edge's credential (`callerToken`, in the `x-control-plane-token` header), else it is refused with
 * 401 before any procedure runs or any body is read; only the probe `GET /health.check` and
 * `GET /metrics` are open. It then verifies the forwarded bearer token itself, so a caller cannot
 * claim an identity it does not hold; subscriptions (SSE) carry the same headers as queries.
 *
 * Uploads (application/octet-stream) bypass the Node adapter, whose request body reads the socket
 * as fast as it arrives whatever the procedure consumes: they go to tRPC's fetch adapter with a
 * body read only as fast as the procedure reads it. A procedure that stops reading (a body over
 * its limit) leaves the rest to be discarded, so that its error still reaches the caller.
 */
export function createControlPlaneServer(deps: {
  /** The API's services (`apiServicesOf`): each router reaches only the functions it declares. */
  services: NarrowApiServices;
  verifyToken: (token: string) => Promise<Identity>;
  /** The credential every caller must present (`CONTROL_PLANE_TOKEN`). */
  callerToken: string;
  /** False when the process serves `GET /metrics` on a port of its own (`METRICS_PORT`). */
  serveMetrics?: boolean;
}): Server {
  const weak = controlPlaneTokenProblem(deps.callerToken);
  if (weak) throw new Error(`the control plane's caller credential ${weak}`);
  const isCaller = controlPlaneTokenCheck(deps.callerToken);
  const contextOf = async (req: IncomingMessage): Promise<Context> => {
    const token = BEARER.exec(header(req, 'authorization') ?? '')?.[1];
    const identity = token ? await deps.verifyToken(token).catch(() => null) : null;
    const tenantHint = header(req, 'x-tenant-id');
    const requestId = header(req, 'x-request-id');
    const traceparent = header(req, 'traceparent');
    return {
      services: deps.services,
      identity,
      tenantHint: tenantHint === undefined ? undefined : decodeTenantHint(tenantHint),
      uploadMeta: decodeUploadMeta(header(req, UPLOAD_META_HEADER)),
      requestId: requestId === undefined ? undefined : requestIdFrom(requestId),
      traceparent: parseTraceparent(traceparent) ? traceparent : undefined,
    };
  };
  const handle = createHTTPHandler({
    router: appRouter,
    // The edge sends queries as POST (api-edge/control-plane-http.ts).
    allowMethodOverride: true,
    // Probes read the status code: a control plane whose database does not answer is not ready.
    responseMeta: ({ paths, data }) => {
      const health = paths?.length === 1 && paths[0] === 'health.check' ? (data[0] as { result?: { data?: Health } } | undefined)?.result?.data : undefined;
      return health?.status === 'unavailable' ? { status: 503 } : {};
    },
    createContext: ({ req }) => contextOf(req),
  });

  async function upload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const aborted = new AbortController();
    res.once('close', () => aborted.abort());
    const request = new Request(new URL(req.url ?? '/', 'http://control-plane'), {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: nodeByteStream(req, () => req.resume()),
      duplex: 'half',
      signal: aborted.signal,
    });
    const response = await fetchRequestHandler({ endpoint: '/', req: request, router: appRouter, createContext: () => contextOf(req) });
    const body = Buffer.from(await response.arrayBuffer());
    // Refused before all of it was read (a storage quota judged by the declared length): the rest is discarded, so that the caller's connection serves its next call.
    if (!req.complete) {
      req.removeAllListeners('data');
      req.resume();
    }
    res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'application/json', 'content-length': body.byteLength });
    res.end(body);
  }

  return createServer((req, res) => {
    if (deps.serveMetrics !== false && req.method === 'GET' && req.url?.split('?')[0] === '/metrics') return void serveMetrics(res);
    if (isProbeRequest(req)) return void answerProbe(req, res, deps.services.health);
    if (!isProbe(req) && !isCaller(header(req, CONTROL_PLANE_TOKEN_HEADER))) return refuseCaller(res);
    if (!isUpload(req)) return handle(req, res);
    upload(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'internal error', code: -32603, data: { appError: { code: 'INTERNAL_ERROR', message: 'internal error' } } } }));
    });
  });
}
