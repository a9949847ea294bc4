import { Elysia, type AnyElysia } from 'elysia';
import { node } from '@elysiajs/node';
import { metricsText, type ControlPlane } from '../control-plane/contracts.ts';
import { errorBody, toErrorResponse } from './errors.ts';
import { apiReferenceRoutes, isOpenApiDocument } from './openapi/reference.ts';
import { requestTrace } from './observability.ts';
import { authenticate, type BrowserSessions, type VerifyToken } from './plugins/auth.ts';
import { assertBodyWithinLimit, assertJsonBody } from './plugins/body-limit.ts';
import { clientAddressOf, type TrustedProxies } from './plugins/client-address.ts';
import { publicRouteOf, webhookDeliveryOf } from './routes/public-routes.ts';
import type { ConsumeRateLimit, RateLimitGroup } from './plugins/rate-limit.ts';
import { isStreamedUpload, rateLimitGroupOf } from './routes/route-checks.ts';
import { RequestCalls } from './request-context.ts';
import { bunRuntime } from './server.ts';
import { V3_BASE, V4_BASE } from './routes/bases.ts';
import { API_ROUTES } from './routes/index.ts';
import { mountRoutes } from './routes/route.ts';
import { probeRoutes } from './routes/probes.ts';

export { V3_BASE, V4_BASE };

export interface EdgeDeps {
  controlPlane: ControlPlane;
  verifyToken: VerifyToken;
  rateLimit: ConsumeRateLimit;
  /** Backend-for-frontend sessions; without them only bearer tokens authenticate. */
  sessions?: BrowserSessions;
  /** Extra routes mounted at the root (sign-in, sessions). */
  plugins?: AnyElysia[];
  onServerError?: (error: unknown, request: Request) => void;
  /** Proxies in front of the edge whose X-Forwarded-For names the client; none by default. */
  trustedProxies?: TrustedProxies;
  /** False when the process serves `GET /metrics` on a port of its own (`METRICS_PORT`) instead. */
  serveMetrics?: boolean;
  /** How long an idle chat stream waits before a heartbeat comment (default 15 s). */
  sseHeartbeatMs?: number;
}

/** An error the control plane threw (it renders itself), as opposed to one of Elysia's own. */
const isDomainError = (error: unknown) => typeof (error as { toBody?: unknown } | null)?.toBody === 'function';

/** The REST API under both bases, mounted from the routes' declarations (api-edge/routes): v3 for the browser (via the BFF), v4 for the platform. */
function apiRoutes(controlPlane: ControlPlane, calls: RequestCalls, options: { sseHeartbeatMs?: number } = {}) {
  const app = new Elysia();
  for (const { base, routes } of Object.values(API_ROUTES)) {
    const api = new Elysia<string>({ prefix: base });
    mountRoutes(api, routes, { controlPlane, calls, options });
    app.use(api);
  }
  return app;
}

/**
 * Every v3 and v4 route the edge serves, as `METHOD /path/:param`, read from the mounted app: the
 * table that the OpenAPI, isolation and malformed-input tests check against the declarations.
 */
export function apiRouteTable(): string[] {
  const unreachable = () => {
    throw new Error('the route table calls no procedure');
  };
  const controlPlane: ControlPlane = { query: unreachable, mutation: unreachable, subscription: unreachable, upload: unreachable };
  return apiRoutes(controlPlane, new RequestCalls()).routes.map((route) => `${route.method} ${route.path}`);
}

/** Turns a route path such as `/users/:id` into a matcher, to tell 405 from 404. */
function routeMatcher(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\?:[A-Za-z]+/g, '[^/]+')}/?$`);
}

/**
 * The REST edge: authenticates and rate-limits every API request, translates it into one
 * control-plane procedure call, and renders results and errors in the REST shapes.
 */
export function createEdgeApp(deps: EdgeDeps) {
  const calls = new RequestCalls();
  let routeTable: Array<{ method: string; matcher: RegExp }> | undefined;

  const clientAddress = (request: Request) =>
    clientAddressOf((request as Request & { ip?: string }).ip, request.headers.get('x-forwarded-for'), deps.trustedProxies);

  // On Bun, Elysia's own adapter serves through Bun's server (api-edge/server.ts).
  const app = new Elysia(bunRuntime ? {} : { adapter: node() })
    .onRequest(async ({ request, set }) => {
      const { pathname } = new URL(request.url);
      // Every answer carries the rate-limit headers, a refusal (429) included.
      const limit = async (group: RateLimitGroup, key: string) => {
        try {
          Object.assign(set.headers, await deps.rateLimit(group, key));
        } catch (error) {
          Object.assign(set.headers, (error as { headers?: object }).headers ?? {});
          throw error;
        }
      };
      // Sign-in asks the provider and writes a session before anyone is known: limited per client.
      if (pathname.startsWith('/auth/')) return void (await limit('anonymous', clientAddress(request)));
      // The API documents are public, limited per client like sign-in.
      if (isOpenApiDocument(request.method, pathname)) return void (await limit('anonymous', clientAddress(request)));
      if (!pathname.startsWith(`${V3_BASE}/`) && !pathname.startsWith(`${V4_BASE}/`)) return;
      const publicRoute = publicRouteOf(request.method, pathname);
      if (publicRoute) {
        // No user: the procedure checks the delivery's signature or the connection's token. A
        // delivery spends its endpoint's budget (its sender may send from many addresses), named
        // by the control plane whatever the path's spelling, so that variants of one path cannot
        // multiply it; a path that names no endpoint, and a connection, spend the client's.
        const trace = requestTrace(request);
        calls.set(request, { identity: null, requestId: trace.requestId, traceparent: trace.traceparent });
        const delivery = publicRoute === 'webhook-delivery' ? webhookDeliveryOf(pathname) : undefined;
        const budget = delivery && (await deps.controlPlane.query({ identity: null }, 'webhooks', 'budgetKey', delivery).catch(() => ({ key: null }))).key;
        return void (await (budget ? limit('webhooks', `webhook:${budget}`) : limit('anonymous', clientAddress(request))));
      }
      let call;
      try {
        call = await authenticate(request, deps.verifyToken, deps.sessions);
      } catch (error) {
        await limit('anonymous', clientAddress(request));
        throw error;
      }
      const trace = requestTrace(request);
      trace.user = call.identity.sub;
      trace.tenant = call.identity.tenant ?? call.tenantHint;
      calls.set(request, { ...call, requestId: trace.requestId, traceparent: trace.traceparent });
      await limit(rateLimitGroupOf(request.method, pathname), call.identity.tenant ? `tenant:${call.identity.tenant}` : `user:${call.identity.sub}`);
      if (!isStreamedUpload(request)) {
        assertBodyWithinLimit(request);
        assertJsonBody(request);
      }
    })
    // Metrics and logs name the matched route template, never the URL.
    .onTransform({ as: 'global' }, ({ request, route }) => {
      requestTrace(request).route = route;
    })
    .onError(({ code, error, request, set }) => {
      // Elysia names a domain error by its own `code` too: only a route it did not find is its NOT_FOUND.
      if (code === 'NOT_FOUND' && !isDomainError(error)) {
        const { pathname } = new URL(request.url);
        routeTable ??= app.routes.map((r) => ({ method: r.method, matcher: routeMatcher(r.path) }));
        const allowed = routeTable.filter((r) => r.matcher.test(pathname)).map((r) => r.method);
        if (allowed.length) {
          set.status = 405;
          set.headers.allow = [...new Set(allowed)].join(', ');
          return errorBody('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${pathname}`);
        }
        set.status = 404;
        return errorBody('NOT_FOUND', `no route for ${request.method} ${pathname}`);
      }
      if (code === 'PARSE') {
        set.status = 400;
        return errorBody('VALIDATION_ERROR', 'request body is not valid JSON', { field: '(body)', issue: 'is not valid JSON' });
      }
      const { status, body } = toErrorResponse(error);
      if (status === 429 || status === 503) set.headers['retry-after'] = String(body.error.retryAfter ?? 1);
      // 501 is an answer (this deployment does not offer it), not a failure to log.
      if (status >= 500 && status !== 501) deps.onServerError?.(error, request);
      set.status = status;
      return body;
    })
    .use(probeRoutes(deps.controlPlane))
    .use(apiReferenceRoutes())
    .use(apiRoutes(deps.controlPlane, calls, { sseHeartbeatMs: deps.sseHeartbeatMs }));
  // Outside the API bases: neither authenticated nor rate-limited (docs/decisions/0109-metrics.md).
  if (deps.serveMetrics !== false) {
    app.get('/metrics', async () => {
      const { contentType, body } = await metricsText();
      return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
    });
  }

  for (const plugin of deps.plugins ?? []) app.use(plugin);
  return app;
}
