import { Elysia } from 'elysia';
import { ValidationError, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { queryValue } from '../request-input.ts';
import { resourceData, v3Resource, v3ResourcePage } from './shape.ts';

/**
 * `filter[<field>]` query parameters, keyed by what stands inside the brackets. One given twice is
 * a 400 rather than one of them silently kept (`filter[f.in]` takes several values). Built from
 * entries, so every name is an own key (`filter[__proto__]` included) that the procedure checks.
 */
function filtersOf(params: URLSearchParams): Record<string, string> {
  const filters = new Map<string, string>();
  for (const [key, value] of params) {
    const match = /^filter\[(.+)\]$/.exec(key);
    if (!match) continue;
    if (filters.has(match[1]!)) throw ValidationError.field(key, 'is given more than once; use .in for several values');
    filters.set(match[1]!, value);
  }
  return Object.fromEntries(filters);
}

/** v3 resources: translates REST to `resources.*` procedures and shapes records flat. */
export function v3ResourceRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v3-resources' })
    .get('/resources', async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const page = await cp.query(calls.of(request), 'resources', 'list', {
        type: queryValue(params, 'type') ?? '',
        filter: filtersOf(params),
        sort: queryValue(params, 'sort'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
        cursor: queryValue(params, 'cursor'),
      });
      return v3ResourcePage(page);
    })
    .get('/resources/:type/:id', async ({ request, params }) =>
      v3Resource(await cp.query(calls.of(request), 'resources', 'get', { type: params.type, id: params.id })),
    )
    .post('/resources/:type', async ({ request, params, body, set }) => {
      const created = await cp.mutation(calls.of(request), 'resources', 'create', { type: params.type, data: resourceData(body) });
      set.status = 201;
      return v3Resource(created);
    })
    .put('/resources/:type/:id', async ({ request, params, body }) =>
      v3Resource(await cp.mutation(calls.of(request), 'resources', 'replace', { type: params.type, id: params.id, data: resourceData(body) })),
    )
    .patch('/resources/:type/:id', async ({ request, params, body }) =>
      v3Resource(await cp.mutation(calls.of(request), 'resources', 'update', { type: params.type, id: params.id, patch: resourceData(body) })),
    )
    .delete('/resources/:type/:id', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request), 'resources', 'delete', { type: params.type, id: params.id });
      set.status = 204;
    });
}
