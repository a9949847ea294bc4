import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { bodyAndQueryOptions, bodyWithPath, jsonObjectBody, tenantOption } from '../request-input.ts';

/**
 * v4 geo: place lookup by name and by coordinates (the tenant is `tenant_id` in the body or query
 * string, else the caller's), and a tenant's datasets of GeoJSON features by the tenant in the
 * path. POST on a dataset's features adds a FeatureCollection, PUT replaces them with it, GET
 * pages through them (all, by `bbox`, or by `lat`, `lon` and `radius`) as a FeatureCollection.
 */
export function v4GeoRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-geo' })
    .post('/geo/resolve-location', ({ request, body }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return cp.query(calls.of(request, tenantId), 'geo', 'resolveLocation', jsonObjectBody(rest));
    })
    .post('/geo/reverse', ({ request, body }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return cp.query(calls.of(request, tenantId), 'geo', 'reverse', jsonObjectBody(rest));
    })
    .get('/geo/datasets/:tenantId', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'geo', 'listDatasets', undefined))
    .post('/geo/datasets/:tenantId', async ({ request, params, body, set }) => {
      const created = await cp.mutation(calls.of(request, params.tenantId), 'geo', 'createDataset', jsonObjectBody(body));
      set.status = 201;
      return created;
    })
    .get('/geo/datasets/:tenantId/:dataset', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'geo', 'getDataset', { dataset: params.dataset }))
    .delete('/geo/datasets/:tenantId/:dataset', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'geo', 'deleteDataset', { dataset: params.dataset });
      set.status = 204;
    })
    .post('/geo/datasets/:tenantId/:dataset/features', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'geo', 'ingest', bodyWithPath(body, { dataset: params.dataset, replace: false })),
    )
    .put('/geo/datasets/:tenantId/:dataset/features', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'geo', 'ingest', bodyWithPath(body, { dataset: params.dataset, replace: true })),
    )
    .get('/geo/datasets/:tenantId/:dataset/features', ({ request, params }) =>
      cp.query(calls.of(request, params.tenantId), 'geo', 'queryFeatures', bodyWithPath(bodyAndQueryOptions(request, undefined), { dataset: params.dataset })),
    );
}
