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

const NO_ID = '00000000-0000-0000-0000-000000000000';
const V3 = '/api/svc/v3';

/** How tests call each declared route: where its tenant comes from, and its sample request. */
const DECLARED_CASES: Record<string, RouteCase> = Object.fromEntries(
  Object.values(API_ROUTES).flatMap(({ base, routes }) =>
    routes.map((route) => [routeKey(base, route), { tenantFrom: route.tenant, sample: route.sample.params, query: route.sample.query, body: route.sample.body }]),
  ),
);

/**
 * How tests call each route the edge serves. A route the edge serves that is missing here fails
 * the coverage test, so that a new route is fuzzed and checked for isolation.
 */
export const ROUTE_CASES: Record<string, RouteCase> = { ...DECLARED_CASES, ...{
  [`GET ${V3}/resources`]: { tenantFrom: 'header', query: 'type=project' },
  [`GET ${V3}/resources/:type/:id`]: { tenantFrom: 'header', sample: { type: 'project', id: NO_ID } },
  [`POST ${V3}/resources/:type`]: { tenantFrom: 'header', sample: { type: 'project' }, body: { name: 'route case' } },
  [`PUT ${V3}/resources/:type/:id`]: { tenantFrom: 'header', sample: { type: 'project', id: NO_ID }, body: { name: 'route case' } },
  [`PATCH ${V3}/resources/:type/:id`]: { tenantFrom: 'header', sample: { type: 'project', id: NO_ID }, body: { name: 'route case' } },
  [`DELETE ${V3}/resources/:type/:id`]: { tenantFrom: 'header', sample: { type: 'project', id: NO_ID } },
  [`GET ${V3}/users/me`]: { tenantFrom: 'header' },
  [`GET ${V3}/users/:id`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  [`GET ${V3}/users`]: { tenantFrom: 'header' },
  [`PATCH ${V3}/users/:id`]: { tenantFrom: 'header', sample: { id: 'me' }, body: { name: 'route case' } },
  [`GET ${V3}/orchestrate/workflows`]: { tenantFrom: 'header' },
  [`POST ${V3}/orchestrate/workflows/:workflowId/execute`]: { tenantFrom: 'header', sample: { workflowId: 'project-briefing' }, body: { input: {}, async: true } },
  [`GET ${V3}/orchestrate/executions/:id`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  [`GET ${V3}/orchestrate/executions`]: { tenantFrom: 'header' },
  [`POST ${V3}/orchestrate/executions/:id/cancel`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  'GET /v4/identity/me': { tenantFrom: 'none' },
  'PATCH /v4/identity/me/profile': { tenantFrom: 'none', body: { name: 'route case' } },
  'GET /v4/identity/tenants': { tenantFrom: 'none' },
  'POST /v4/identity/me/provision': { tenantFrom: 'none', body: {} },
  'POST /v4/platform/tenants': { tenantFrom: 'none', body: {} },
  'POST /v4/platform/tenants/:tenantId/children': { tenantFrom: 'path', body: {} },
  'POST /v4/platform/tenants/:tenantId/children/:childId/bootstrap-admin': { tenantFrom: 'path', sample: { childId: NO_ID } },
  'POST /v4/platform/tenants/:tenantId/apps': { tenantFrom: 'path', body: {} },
  'POST /v4/platform/tenants/:tenantId/delete': { tenantFrom: 'path' },
  'POST /v4/platform/tenants/:tenantId/users/:oid/provision': { tenantFrom: 'path', sample: { oid: NO_ID } },
  'GET /v4/platform/users/by-email': { tenantFrom: 'none', query: 'email=nobody@example.test' },
  'GET /v4/platform/users/:oid/memberships': { tenantFrom: 'none', sample: { oid: NO_ID } },
  'GET /v4/data/resources/:tenantId/storage': { tenantFrom: 'path' },
  'GET /v4/data/resources/:tenantId/storage/doctor': { tenantFrom: 'path' },
  'POST /v4/data/resources/:tenantId/storage/provision': { tenantFrom: 'path', query: 'dryRun=true', body: {} },
  'POST /v4/data/resources/:tenantId/storage/sync-schema': { tenantFrom: 'path', query: 'dryRun=true', body: {} },
  'GET /v4/data/resources/object-types': { tenantFrom: 'query' },
  'POST /v4/data/resources/object-types': { tenantFrom: 'query', body: { name: 'RouteCase', schema: { type: 'object' } } },
  'PATCH /v4/data/resources/object-types/:objectTypeId': { tenantFrom: 'query', sample: { objectTypeId: NO_ID }, body: { status: 'draft' } },
  'GET /v4/data/resources/schema/:tenantId': { tenantFrom: 'path' },
  'GET /v4/data/resources/:tenantId/:objectType': { tenantFrom: 'path', sample: { objectType: 'project' } },
  'GET /v4/data/resources/:tenantId/:objectType/:id': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID } },
  'POST /v4/data/resources/:tenantId/:objectType': { tenantFrom: 'path', sample: { objectType: 'project' }, body: { data: { name: 'route case' } } },
  'PUT /v4/data/resources/:tenantId/:objectType/:id': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID }, body: { data: { name: 'route case' }, version: 1 } },
  'DELETE /v4/data/resources/:tenantId/:objectType/:id': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID } },
  'POST /v4/data/resources/:tenantId/:objectType/:id/files/:propertyName': {
    tenantFrom: 'path',
    sample: { objectType: 'project', id: NO_ID, propertyName: 'attachment' },
    query: 'filename=case.txt',
  },
  'GET /v4/data/resources/:tenantId/:objectType/:id/files/:propertyName': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID, propertyName: 'attachment' } },
  'DELETE /v4/data/resources/:tenantId/:objectType/:id/files/:propertyName': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID, propertyName: 'attachment' } },
  'POST /v4/data/resources/:tenantId/query': { tenantFrom: 'path', body: { types: ['project'] } },
  'POST /v4/data/resources/:tenantId/:objectType/aggregate': { tenantFrom: 'path', sample: { objectType: 'project' }, body: { groupBy: ['status'], metrics: { n: { count: '*' } } } },
  'POST /v4/data/resources/:tenantId/:objectType/:id/actions/:action': { tenantFrom: 'path', sample: { objectType: 'project', id: NO_ID, action: 'approve' }, body: {} },
  'GET /v4/platform/capabilities/catalog': { tenantFrom: 'none' },
  'POST /v4/platform/capabilities/evaluate': { tenantFrom: 'query', body: { capabilities: ['workflows.runtime'] } },
  'PUT /v4/platform/capabilities/overrides/:tenantId/:capability': { tenantFrom: 'path', sample: { capability: 'geo' }, body: { allowed: true, reason: 'route case' } },
  'DELETE /v4/platform/capabilities/overrides/:tenantId/:capability': { tenantFrom: 'path', sample: { capability: 'geo' } },
  'PUT /v4/platform/tenants/:tenantId/plan': { tenantFrom: 'path', body: { plan: 'team' } },
  'POST /v4/realtime/negotiate': { tenantFrom: 'query', body: { channels: ['resources'] } },
  // Authenticated by a negotiated token that names its tenant, not by the caller: test/e2e/v4-realtime.test.ts covers its isolation.
  'GET /v4/realtime/connect': { tenantFrom: 'none' },
  'GET /v4/realtime/alerts': { tenantFrom: 'query' },
  'POST /v4/platform/realtime/signing-keys/rotate': { tenantFrom: 'none', body: {} },
  'POST /v4/webhooks/:tenantId/endpoints': { tenantFrom: 'path', body: { source: 'route-case', workflowId: 'project-briefing' } },
  'GET /v4/webhooks/:tenantId/endpoints': { tenantFrom: 'path' },
  'GET /v4/webhooks/:tenantId/endpoints/:source': { tenantFrom: 'path', sample: { source: 'route-case' } },
  'PATCH /v4/webhooks/:tenantId/endpoints/:source': { tenantFrom: 'path', sample: { source: 'route-case' }, body: { description: 'route case' } },
  'DELETE /v4/webhooks/:tenantId/endpoints/:source': { tenantFrom: 'path', sample: { source: 'route-case' } },
  'POST /v4/webhooks/:tenantId/endpoints/:source/rotate-secret': { tenantFrom: 'path', sample: { source: 'route-case' } },
  'GET /v4/webhooks/:tenantId/endpoints/:source/deliveries': { tenantFrom: 'path', sample: { source: 'route-case' } },
  'GET /v4/webhooks/:tenantId/endpoints/:source/refusals': { tenantFrom: 'path', sample: { source: 'route-case' } },
  'GET /v4/webhooks/:tenantId/deliveries/:deliveryId': { tenantFrom: 'path', sample: { deliveryId: NO_ID } },
  'POST /v4/webhooks/:tenantId/deliveries/:deliveryId/replay': { tenantFrom: 'path', sample: { deliveryId: NO_ID } },
  // No caller token: the delivery's signature authenticates it. Here it names no endpoint (404); test/e2e/v4-webhooks.test.ts
  // covers a signature of one tenant's endpoint sent to another tenant's.
  'POST /v4/webhooks/:tenantId/:source': { tenantFrom: 'path', sample: { source: 'route-case' }, body: {} },
  [`POST ${V3}/chat`]: { tenantFrom: 'header', body: { message: 'route case' } },
  [`GET ${V3}/chat/conversations`]: { tenantFrom: 'header' },
  [`GET ${V3}/chat/conversations/:conversationId`]: { tenantFrom: 'header', sample: { conversationId: NO_ID } },
  [`DELETE ${V3}/chat/conversations/:conversationId`]: { tenantFrom: 'header', sample: { conversationId: NO_ID } },
  [`GET ${V3}/chat/conversations/:conversationId/messages/:messageId/events`]: { tenantFrom: 'header', sample: { conversationId: NO_ID, messageId: NO_ID } },
  'POST /v4/ai/chat/:tenantId/:workflowId/:stage': { tenantFrom: 'path', sample: { workflowId: 'route-case', stage: 'chat' }, body: { message: 'route case' } },
  'POST /v4/ai/chat/stream/:tenantId/:workflowId/:stage': { tenantFrom: 'path', sample: { workflowId: 'route-case', stage: 'chat' }, body: { message: 'route case' } },
  'GET /v4/workflows/runtime/:workflowKey/status': { tenantFrom: 'query', sample: { workflowKey: 'route-case' } },
  'POST /v4/workflows/runtime-requests': { tenantFrom: 'query', body: { workflow_key: 'route-case', reason: 'route case' } },
  'GET /v4/integrations/builder/readiness': { tenantFrom: 'query' },
  'POST /v4/geo/resolve-location': { tenantFrom: 'query', body: { query: 'Paris' } },
  'POST /v4/geo/reverse': { tenantFrom: 'query', body: { lat: 48.85, lon: 2.35 } },
  'GET /v4/geo/datasets/:tenantId': { tenantFrom: 'path' },
  'POST /v4/geo/datasets/:tenantId': { tenantFrom: 'path', body: { key: 'route-case' } },
  'GET /v4/geo/datasets/:tenantId/:dataset': { tenantFrom: 'path', sample: { dataset: 'route-case' } },
  'DELETE /v4/geo/datasets/:tenantId/:dataset': { tenantFrom: 'path', sample: { dataset: 'route-case' } },
  'POST /v4/geo/datasets/:tenantId/:dataset/features': { tenantFrom: 'path', sample: { dataset: 'route-case' }, body: { type: 'FeatureCollection', features: [] } },
  'PUT /v4/geo/datasets/:tenantId/:dataset/features': { tenantFrom: 'path', sample: { dataset: 'route-case' }, body: { type: 'FeatureCollection', features: [] } },
  'GET /v4/geo/datasets/:tenantId/:dataset/features': { tenantFrom: 'path', sample: { dataset: 'route-case' }, query: 'bbox=-1,-1,1,1' },
  'POST /v4/platform/provisioning/idp-apps': {
    tenantFrom: 'query',
    body: { appKey: 'route-case', displayName: 'Route case', redirectUris: ['https://route-case.example/callback'] },
  },
  'POST /v4/platform/provisioning/idp-apps/:clientId/rotate-secret': { tenantFrom: 'none', sample: { clientId: NO_ID } },
  'GET /v4/verticals/:key': { tenantFrom: 'query', sample: { key: 'route-case' } },
  'GET /v4/verticals/:key/resources/:objectType': { tenantFrom: 'query', sample: { key: 'route-case', objectType: 'project' } },
  'GET /v4/verticals/:key/resources/:objectType/:id': { tenantFrom: 'query', sample: { key: 'route-case', objectType: 'project', id: NO_ID } },
  'POST /v4/verticals/:key/resources/:objectType': { tenantFrom: 'query', sample: { key: 'route-case', objectType: 'project' }, body: { data: { name: 'route case' } } },
  'PUT /v4/verticals/:key/resources/:objectType/:id': {
    tenantFrom: 'query',
    sample: { key: 'route-case', objectType: 'project', id: NO_ID },
    body: { data: { name: 'route case' }, version: 1 },
  },
  'DELETE /v4/verticals/:key/resources/:objectType/:id': { tenantFrom: 'query', sample: { key: 'route-case', objectType: 'project', id: NO_ID } },
  'POST /v4/data/resources/:tenantId/search': { tenantFrom: 'path', body: { query: 'route case', mode: 'fulltext' } },
  // Upload routes take a multipart form: a JSON body is refused (400) after the caller's tenant is checked.
  [`POST ${V3}/documents`]: { tenantFrom: 'header', body: {} },
  [`GET ${V3}/documents`]: { tenantFrom: 'header' },
  [`POST ${V3}/documents/search`]: { tenantFrom: 'header', body: { query: 'route case' } },
  [`GET ${V3}/documents/search`]: { tenantFrom: 'header' },
  [`GET ${V3}/documents/:id`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  [`GET ${V3}/documents/:id/file`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  [`POST ${V3}/documents/:id/classify`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  [`POST ${V3}/documents/:id/index`]: { tenantFrom: 'header', sample: { id: NO_ID }, body: {} },
  [`DELETE ${V3}/documents/:id`]: { tenantFrom: 'header', sample: { id: NO_ID } },
  'POST /v4/data/documents/upload': { tenantFrom: 'query', body: {} },
  'POST /v4/data/documents/classify': { tenantFrom: 'query', body: {} },
  'GET /v4/data/documents/records/:documentId': { tenantFrom: 'query', sample: { documentId: NO_ID } },
  'POST /v4/data/documents/rag-index': { tenantFrom: 'query', body: { documentId: NO_ID } },
  'GET /v4/data/documents/rag-index/:jobId': { tenantFrom: 'query', sample: { jobId: NO_ID } },
} };

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
    if (!c) throw new Error(`${route} has no case in test/harness/routes.ts`);
    return { route, method, template, path: fillPath(template, { ...c.sample, ...values }), tenant: values.tenantId, case: c };
  });
}

/** A path with the case's query string (and `extra`) appended. */
export function withQuery(call: RouteCall, extra?: string): string {
  const tenant = call.case.tenantFrom === 'query' && call.tenant ? `tenant_id=${encodeURIComponent(call.tenant)}` : undefined;
  const query = [tenant, call.case.query, extra].filter(Boolean).join('&');
  return query ? `${call.path}?${query}` : call.path;
}
