import { routeOf, siblingSegments } from './route-lookup.ts';
import type { RouteDocs } from './route.ts';

/**
 * API routes that outside callers reach without a bearer token of the identity provider: those
 * whose declaration names another authentication (`docs.security`): an inbound webhook delivery
 * (`POST /v4/webhooks/{tenantId}/{source}`), authenticated by its signature, and a realtime
 * connection (`GET /v4/realtime/connect`), by its negotiated token. The procedures they call check
 * those; the edge neither authenticates them nor reads their body.
 */
export type PublicRoute = 'webhook-delivery' | 'realtime-connect';

const PUBLIC_ROUTES: Record<NonNullable<RouteDocs['security']>, PublicRoute> = {
  webhookSignature: 'webhook-delivery',
  realtimeToken: 'realtime-connect',
};

/**
 * The public route a request is for, with its path parameters as written. A parameter never takes
 * a name that another route spells there (`endpoints`, `deliveries` beside a delivery's source):
 * such a path is left to authentication.
 */
function publicRouteWithParams(method: string, pathname: string): { kind: PublicRoute; params: Record<string, string> } | undefined {
  const found = routeOf(method, pathname);
  const security = found?.declared.route.docs.security;
  if (!found || !security) return undefined;
  const { segments } = found.declared;
  if (segments.some((segment, i) => segment === null && siblingSegments(found.declared, i).has(found.segments[i]!))) return undefined;
  return { kind: PUBLIC_ROUTES[security], params: found.params };
}

export function publicRouteOf(method: string, pathname: string): PublicRoute | undefined {
  return publicRouteWithParams(method, pathname)?.kind;
}

/** The tenant (id or slug, as written) and source that a delivery's path names, decoded; undefined for another path or a malformed escape. */
export function webhookDeliveryOf(pathname: string): { tenantId: string; source: string } | undefined {
  const found = publicRouteWithParams('POST', pathname);
  if (found?.kind !== 'webhook-delivery') return undefined;
  try {
    return { tenantId: decodeURIComponent(found.params.tenantId!), source: decodeURIComponent(found.params.source!) };
  } catch {
    return undefined;
  }
}
