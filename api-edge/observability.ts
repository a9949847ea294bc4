import type { IncomingMessage, ServerResponse } from 'node:http';
import { newTraceparent, observeHttp, parseTraceparent, REQUEST_ID_HEADER, requestIdFrom, traceIdOf, TRACEPARENT_HEADER } from '../control-plane/contracts.ts';

/** One line per answered request, for the access log (production: pino JSON on stderr). */
export interface AccessLogEntry {
  requestId: string;
  traceId?: string;
  method: string;
  /** The matched route template (`/v4/tenants/:tenantId`), never the raw URL. */
  route: string;
  status: number;
  durationMs: number;
  tenant?: string;
  user?: string;
}

export type AccessLog = (entry: AccessLogEntry) => void;

/** What the edge knows of a request while it is answered: set by the server, completed by the app's hooks. */
export interface RequestTrace {
  requestId: string;
  /** The client's `traceparent` when valid, else a new trace's. */
  traceparent: string;
  started: number;
  route?: string;
  tenant?: string;
  user?: string;
}

const traces = new WeakMap<Request, RequestTrace>();

function newTrace(headers: { get(name: string): string | null }): RequestTrace {
  const traceparent = headers.get(TRACEPARENT_HEADER);
  return {
    requestId: requestIdFrom(headers.get(REQUEST_ID_HEADER)),
    traceparent: traceparent && parseTraceparent(traceparent) ? traceparent : newTraceparent(),
    started: performance.now(),
  };
}

/** The request's trace, made on first use (a request that did not come through the edge's server, in a unit test). */
export function requestTrace(request: Request): RequestTrace {
  let trace = traces.get(request);
  if (!trace) traces.set(request, (trace = newTrace(request.headers)));
  return trace;
}

/**
 * Headers on every edge response (docs/decisions/0110-security-headers.md). An answer that sets its own
 * Content-Security-Policy keeps it; every other (JSON, redirects, errors) gets the API policy,
 * which lets a browser load nothing from it and frame it nowhere.
 */
export const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";
/**
 * The identity provider's pages: inline styles, no frames, no base URL; oidc-provider adds the
 * hash of its one inline script (the form_post auto-submit) to `script-src`. Forms may post to a
 * client's redirect URI on another origin (form_post), so `form-action` stays open.
 */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The route label of a request no route took: refused before routing (auth, rate limit) under an API base, or no route at all. */
function unroutedLabel(pathname: string, status: number): string {
  if (status === 404 || status === 405) return '(unmatched)';
  for (const base of ['/api/svc/v3/', '/v4/', '/auth/']) if (pathname.startsWith(base)) return `${base}*`;
  return '(unmatched)';
}

const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return (start < 0 ? '/' : url.slice(start)).split('?')[0]!;
};

function finish(trace: RequestTrace, method: string, route: string, status: number, log: AccessLog | undefined): void {
  const seconds = (performance.now() - trace.started) / 1000;
  observeHttp(method, route, status, seconds);
  log?.({
    requestId: trace.requestId,
    traceId: traceIdOf(trace.traceparent),
    method,
    route,
    status,
    durationMs: Math.round(seconds * 1e4) / 10,
    ...(trace.tenant ? { tenant: trace.tenant } : {}),
    ...(trace.user ? { user: trace.user } : {}),
  });
}

function withHeaders(response: Response, requestId: string): Response {
  let answer = response;
  try {
    answer.headers.set(REQUEST_ID_HEADER, requestId);
  } catch {
    // A response with immutable headers (one fetched from elsewhere): copy it.
    answer = new Response(response.body, response);
    answer.headers.set(REQUEST_ID_HEADER, requestId);
  }
  const headers = answer.headers;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.set(name, value);
  if (!headers.has('content-security-policy')) headers.set('content-security-policy', API_CSP);
  return answer;
}

/**
 * A fetch handler of the edge with its request id (`X-Request-Id`, echoed on every answer), its
 * security headers, its metrics by route template, and its access log. `routeOf` names the route
 * of a request no Elysia route answered (the identity provider's).
 */
export function observedFetch(fetch: (request: Request) => Response | Promise<Response>, log?: AccessLog, routeOf?: (pathname: string) => string | undefined) {
  return async (request: Request): Promise<Response> => {
    const trace = requestTrace(request);
    let response: Response;
    try {
      response = await fetch(request);
    } catch (error) {
      finish(trace, request.method, trace.route ?? '(unmatched)', 500, log);
      throw error;
    }
    const pathname = pathOf(request.url);
    finish(trace, request.method, trace.route ?? routeOf?.(pathname) ?? unroutedLabel(pathname, response.status), response.status, log);
    return withHeaders(response, trace.requestId);
  };
}

/**
 * The same for a request answered by a Node handler (the identity provider on Node): headers are
 * set before it writes, so that its own (a page's Content-Security-Policy) take precedence, and
 * the response is counted when it has been sent.
 */
export function observeNodeRequest(req: IncomingMessage, res: ServerResponse, route: string, log?: AccessLog): void {
  const trace = newTrace({ get: (name) => (typeof req.headers[name] === 'string' ? req.headers[name] : null) });
  res.setHeader(REQUEST_ID_HEADER, trace.requestId);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  res.setHeader('content-security-policy', PAGE_CSP);
  res.once('finish', () => finish(trace, req.method ?? 'GET', route, res.statusCode, log));
}

/** The route label of an identity-provider path: its first segment (`/oauth2/*`, `/interaction/*`). */
export function mountRoute(pathname: string): string {
  const segment = pathname.split('/')[1];
  return segment ? `/${segment}/*` : '/';
}
