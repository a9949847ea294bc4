import { API_ROUTES } from './index.ts';
import type { Route } from './route.ts';

/**
 * The declared route a request is for, found before routing: what the edge decides ahead of the
 * router (whether a route is public, reads its own body, which rate-limit budget it spends) is read
 * from that route's declaration, never from paths matched by hand. It matches as the router does:
 * `:param` takes one non-empty segment, a trailing slash is ignored, and where a static segment
 * and a parameter both fit, the static one wins.
 */

/** A declared route with its path as segments under its API's base (`null`: a parameter). */
export interface DeclaredRoute {
  base: string;
  route: Route;
  segments: Array<string | null>;
  names: string[];
}

/** Every declared route of every API, as the lookup sees it. */
export const DECLARED_ROUTES: readonly DeclaredRoute[] = Object.values(API_ROUTES).flatMap(({ base, routes }) =>
  routes.map((route) => {
    const parts = route.path.split('/').slice(1);
    return {
      base,
      route,
      segments: parts.map((part) => (part.startsWith(':') ? null : part)),
      names: parts.filter((part) => part.startsWith(':')).map((part) => part.slice(1)),
    };
  }),
);

const byMethod = new Map<string, DeclaredRoute[]>();
for (const declared of DECLARED_ROUTES) byMethod.set(declared.route.method, [...(byMethod.get(declared.route.method) ?? []), declared]);

/** The segments of `pathname` under `base` (a trailing slash ignored), or undefined for a path outside it. */
function segmentsUnder(base: string, pathname: string): string[] | undefined {
  if (!pathname.startsWith(`${base}/`)) return undefined;
  const segments = pathname.slice(base.length + 1).split('/');
  if (segments.length > 1 && segments.at(-1) === '') segments.pop();
  return segments;
}

/** Static before parameter, segment by segment: the route the router prefers comes first. */
function preferred(a: DeclaredRoute, b: DeclaredRoute): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const rank = Number(a.segments[i] === null) - Number(b.segments[i] === null);
    if (rank !== 0) return rank;
  }
  return 0;
}

/** The declared route that serves `method` on `pathname`, with its path parameters as written (not decoded); undefined for none. */
export function routeOf(method: string, pathname: string): { declared: DeclaredRoute; params: Record<string, string>; segments: string[] } | undefined {
  let found: { declared: DeclaredRoute; segments: string[] } | undefined;
  for (const declared of byMethod.get(method) ?? []) {
    const segments = segmentsUnder(declared.base, pathname);
    if (!segments || segments.length !== declared.segments.length) continue;
    const fits = declared.segments.every((segment, i) => (segment === null ? segments[i] !== '' : segment === segments[i]));
    if (fits && (!found || preferred(declared, found.declared) < 0)) found = { declared, segments };
  }
  if (!found) return undefined;
  const values = found.segments.filter((_, i) => found.declared.segments[i] === null);
  return { ...found, params: Object.fromEntries(found.declared.names.map((name, i) => [name, values[i]!])) };
}

/**
 * The static segments that other routes of the same API spell where `declared` has its parameter
 * number `position` (its segment index), under the same leading segments: `endpoints` and
 * `deliveries` beside `POST /webhooks/:tenantId/:source`.
 */
export function siblingSegments(declared: DeclaredRoute, position: number): Set<string> {
  const names = new Set<string>();
  for (const other of DECLARED_ROUTES) {
    if (other.base !== declared.base || other.segments.length <= position) continue;
    const segment = other.segments[position];
    const sameLead = declared.segments.slice(0, position).every((mine, i) => mine === null || other.segments[i] === null || mine === other.segments[i]);
    if (segment !== null && segment !== undefined && sameLead) names.add(segment);
  }
  return names;
}
