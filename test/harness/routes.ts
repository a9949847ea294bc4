import { apiRouteTable } from '../../api-edge/app.ts';
import { API_ROUTES, routeKey } from '../../api-edge/routes/index.ts';
import type { TenantFrom } from '../../api-edge/routes/route.ts';

export type { TenantFrom };

export interface RouteCase {
  tenantFrom: TenantFrom;
  /** Path parameters that name something the caller may use, by parameter name (`:tenantId` is filled by the test). */
  sample?: Record<string, string>;
  /** A query string every call of the route carries (a dry run, so that nothing is provisioned). */
  query?: string;
  /** The route reads a body; sent here for bodies tests. */
  body?: unknown;
}

/**
 * How tests call each route the edge serves, from its declaration (api-edge/routes, `defineRoute`):
 * where its tenant comes from, and its sample request. The malformed-input and isolation suites
 * call every route with it, and the contract fuzzer reads it beside the OpenAPI documents.
 */
export const ROUTE_CASES: Record<string, RouteCase> = Object.fromEntries(
  Object.values(API_ROUTES).flatMap(({ base, routes }) =>
    routes.map((route) => [routeKey(base, route), { tenantFrom: route.tenant, sample: route.sample.params, query: route.sample.query, body: route.sample.body }]),
  ),
);

export interface RouteCall {
  /** `METHOD /path/:param` as the edge's route table names it. */
  route: string;
  method: string;
  template: string;
  /** The path with parameters filled, without the case's query string. */
  path: string;
  /** The tenant the call names (`:tenantId`, or `tenant_id` for routes that take it from the query). */
  tenant?: string;
  case: RouteCase;
}

/** The v3 and v4 routes the edge serves, each with its case (undefined for a route missing from ROUTE_CASES). */
export function servedRoutes(): Array<{ route: string; method: string; template: string; case: RouteCase | undefined }> {
  return apiRouteTable().map((route) => {
    const [method, template] = route.split(' ') as [string, string];
    return { route, method, template, case: Object.hasOwn(ROUTE_CASES, route) ? ROUTE_CASES[route] : undefined };
  });
}

const PARAM = /:([A-Za-z]+)/g;

/** The names of a template's path parameters, in order. */
export const paramsOf = (template: string) => [...template.matchAll(PARAM)].map((m) => m[1]!);

/** Fills a route's parameters: `values` first, then the case's samples. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(PARAM, (_, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`no value for :${name} in ${template}`);
    return values[name]!;
  });
}

/** Every route with its parameters filled from `values` (the tenant) and the case's samples. */
export function routeCalls(values: Record<string, string>): RouteCall[] {
  return servedRoutes().map(({ route, method, template, case: c }) => {
    if (!c) throw new Error(`${route} is served but not declared with defineRoute (api-edge/routes)`);
    return { route, method, template, path: fillPath(template, { ...c.sample, ...values }), tenant: values.tenantId, case: c };
  });
}

/** A path with the case's query string (and `extra`) appended. */
export function withQuery(call: RouteCall, extra?: string): string {
  const tenant = call.case.tenantFrom === 'query' && call.tenant ? `tenant_id=${encodeURIComponent(call.tenant)}` : undefined;
  const query = [tenant, call.case.query, extra].filter(Boolean).join('&');
  return query ? `${call.path}?${query}` : call.path;
}
