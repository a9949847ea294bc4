import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toFetchHandler, toNodeHandler } from 'srvx/node';
import type { createEdgeApp } from './app.ts';
import { mountRoute, observedFetch, observeNodeRequest, PAGE_CSP, type AccessLog } from './observability.ts';
import { BODY_METHODS, withMeasuredBody } from './plugins/body-limit.ts';
import { hasUnmeasuredBody, isStreamedUpload } from './routes/route-checks.ts';
import { drainableNodeServer, ServedStreams, withinGrace } from './drain.ts';

/** Requests that the identity provider answers instead of the REST app (its own Node handler). */
export interface NodeMount {
  handles(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/** The edge's HTTP server, whichever runtime serves it. */
export interface EdgeServer {
  /** Listens on `port` (0 picks one) and resolves with the port; rejects when it is taken. */
  listen(port: number, host: string): Promise<number>;
  /**
   * Stops accepting connections, ends open event streams with their final event, lets requests
   * in flight finish for up to `graceMs` (default 0), then closes every connection (api-edge/drain.ts).
   */
  close(graceMs?: number): Promise<void>;
}

/** The part of Bun's server API the edge uses (no Bun types are installed: Node type-checks this code). */
interface BunServer {
  readonly port: number;
  requestIP(request: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
interface BunRuntime {
  /** Asks for a garbage collection; `false`: without waiting for it. */
  gc(synchronous: boolean): void;
  serve(options: { port: number; hostname: string; reusePort: boolean; idleTimeout: number; fetch(request: Request, server: BunServer): Response | Promise<Response> }): BunServer;
}

/** Bun's runtime API, when this process runs on Bun. */
export const bunRuntime = (globalThis as { Bun?: BunRuntime }).Bun;

type EdgeApp = ReturnType<typeof createEdgeApp>;

/** How long Bun's server keeps a connection that sends and receives nothing (a load balancer's usual idle timeout). */
const IDLE_TIMEOUT_SECONDS = 60;

/**
 * One HTTP server for the edge: the identity provider's paths go to it, the rest to Elysia. On Bun
 * it is Bun's own server (about 1.6 times the requests per second of node:http for the same app,
 * README); on Node it is node:http.
 */
export function createEdgeServer(app: EdgeApp, mounts: NodeMount[] = [], options: { accessLog?: AccessLog } = {}): EdgeServer {
  app.compile();
  return bunRuntime ? bunServer(bunRuntime, app, mounts, options.accessLog) : nodeServer(app, mounts, options.accessLog);
}

/**
 * Every answer, of the app or the identity provider, carries the request id and the security
 * headers, and is counted and logged (api-edge/observability.ts).
 */
function nodeServer(app: EdgeApp, mounts: NodeMount[], accessLog?: AccessLog): EdgeServer {
  const streams = new ServedStreams();
  const fetchApp = observedFetch(streams.track((request: Request) => app.fetch(request)), accessLog);
  const fetchRest = (request: Request) => (hasUnmeasuredBody(request) ? withMeasuredBody(request).then(fetchApp) : fetchApp(request));
  const handleRest = toNodeHandler(fetchRest);
  const server: Server = createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    const mount = mounts.find((m) => m.handles(pathname));
    if (!mount) return void handleRest(req as never, res as never);
    observeNodeRequest(req, res, mountRoute(pathname), accessLog);
    mount.handle(req, res);
  });
  return asEdgeServer(server, () => streams.endAll());
}

/** A node:http server as an EdgeServer: listen resolves with the port, close drains it (`endStreams` ends its event streams). */
export function asEdgeServer(server: Server, endStreams?: () => void): EdgeServer {
  const drain = drainableNodeServer(server, endStreams);
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    close: (graceMs = 0) => drain(graceMs),
  };
}

/**
 * A Node (req, res) handler as a fetch handler. srvx's emulated request emits `end` without ending
 * its stream, so a reader that iterates the body (oidc-provider's form parser) would wait forever:
 * the stream is ended for real when the body has arrived.
 */
function asFetchHandler(mount: NodeMount): (request: Request) => Promise<Response> {
  return toFetchHandler((req: IncomingMessage, res: ServerResponse) => {
    req.socket.once('end', () => {
      req.complete = true;
      req.push(null);
    });
    res.setHeader('content-security-policy', PAGE_CSP);
    mount.handle(req, res);
  }) as never;
}

/**
 * A request from Bun's server as node:http gives it on Node, where the edge was first built: an
 * absolute URL when the client sent no usable Host (Bun gives only the path, which `new URL`
 * refuses), and an empty body when one was declared JSON but none was sent (Bun gives none, and
 * Elysia then parses nothing: the request would go on without its body instead of failing as
 * invalid JSON).
 */
function asNodeGivesIt(request: Request): Request {
  const pathOnly = request.url.startsWith('/');
  const emptyJson = BODY_METHODS.has(request.method) && request.body === null && (request.headers.get('content-type') ?? '').includes('json');
  if (!pathOnly && !emptyJson) return request;
  return new Request(pathOnly ? `http://localhost${request.url}` : request.url, {
    method: request.method,
    headers: request.headers,
    body: emptyJson ? '' : request.body,
    signal: request.signal,
  });
}

/** How many bytes of a streamed upload Bun's server reads between two requested garbage collections. */
const UPLOAD_COLLECTION_BYTES = 8 * 1024 * 1024;

/**
 * A streamed upload (a file, a document form, a webhook delivery) whose body asks Bun for a
 * garbage collection, without waiting for it, every UPLOAD_COLLECTION_BYTES read. Bun's
 * collector otherwise leaves the chunks already written to the blob store for a later
 * collection: a 100 MB upload grew the process by about 72 MB, and mostly by 15 to 23 MB with this
 * (docs/decisions/0106-bun-collects-during-uploads.md).
 */
function collectingWhileRead(bun: BunRuntime, request: Request): Request {
  // The method and path first: reading `body` costs Bun more, and this runs for every request.
  if (!isStreamedUpload(request) || !request.body) return request;
  const reader = request.body.getReader();
  let sinceCollection = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        sinceCollection += value.byteLength;
        if (sinceCollection >= UPLOAD_COLLECTION_BYTES) {
          sinceCollection = 0;
          bun.gc(false);
        }
        controller.enqueue(value);
      },
      // Left to Bun as it was: the edge answers a refused upload and closes the connection itself.
      cancel: () => reader.releaseLock(),
    },
    { highWaterMark: 0 },
  );
  return new Request(request.url, { method: request.method, headers: request.headers, body, signal: request.signal, duplex: 'half' });
}

function bunServer(bun: BunRuntime, app: EdgeApp, mounts: NodeMount[], accessLog?: AccessLog): EdgeServer {
  const fetchOf = new Map<NodeMount, (request: Request) => Promise<Response>>();
  const streams = new ServedStreams();
  let server: BunServer | undefined;
  /** The identity provider's paths to its handler, the rest to Elysia. */
  const dispatch = (request: Request): Response | Promise<Response> => {
    const pathStart = request.url.indexOf('/', request.url.indexOf('//') + 2);
    const pathname = request.url.slice(pathStart).split('?')[0]!;
    const mount = mounts.find((m) => m.handles(pathname));
    if (!mount) return app.fetch(request);
    let handler = fetchOf.get(mount);
    if (!handler) fetchOf.set(mount, (handler = asFetchHandler(mount)));
    return handler(request);
  };
  const route = observedFetch(streams.track(dispatch), accessLog, (pathname) => (mounts.some((m) => m.handles(pathname)) ? mountRoute(pathname) : undefined));
  return {
    listen: async (port, host) => {
      server = bun.serve({
        port,
        hostname: host,
        // A second instance on a taken port fails (EADDRINUSE) instead of sharing it unnoticed.
        reusePort: false,
        // Bun closes a connection idle for 10 s by default, even while its request is being
        // answered: a synchronous execute waits up to 10 s before it answers.
        idleTimeout: IDLE_TIMEOUT_SECONDS,
        fetch(received, srv) {
          const request = collectingWhileRead(bun, asNodeGivesIt(received));
          // The rate limiter keys anonymous requests by the client address, as `request.ip` on Node;
          // read only when asked for, as it costs a system call.
          Object.defineProperty(request, 'ip', { get: () => srv.requestIP(received)?.address, configurable: true });
          return hasUnmeasuredBody(request) ? withMeasuredBody(request).then(route) : route(request);
        },
      });
      return server.port;
    },
    close: async (graceMs = 0) => {
      if (!server) return;
      // Bun's stop(false) stops listening and resolves once the requests in flight are answered.
      const answered = server.stop(false);
      streams.endAll();
      await withinGrace(answered, graceMs);
      await server.stop(true);
    },
  };
}
