import { V3_BASE, V4_BASE } from './bases.ts';
import type { Route } from './route.ts';
import { V3_ROUTES } from './v3/index.ts';
import { V4_ROUTES } from './v4/index.ts';

/** Every declared REST route, by API, with the base it is served under. */
export const API_ROUTES = {
  v3: { base: V3_BASE, routes: V3_ROUTES },
  v4: { base: V4_BASE, routes: V4_ROUTES },
} as const satisfies Record<string, { base: string; routes: readonly Route[] }>;

/** `METHOD /base/path/:param`, as the edge's route table names a route. */
export const routeKey = (base: string, route: Pick<Route, 'method' | 'path'>) => `${route.method} ${base}${route.path}`;
