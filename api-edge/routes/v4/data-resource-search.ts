import { ResourceSearchInputSchema, ResourceSearchResultSchema } from '../../../control-plane/contracts.ts';
import { tenantPath } from '../params.ts';
import { jsonObjectBody } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/**
 * v4 resource search: `POST .../{tenantId}/search` ranks the tenant's resources by their types'
 * `searchFields` projection. A static segment, so it wins over a create of a type named `search`
 * (a key no type may have).
 */
export const v4ResourceSearchRoutes = [
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/search',
    procedure: 'search.resources',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: tenantPath, body: { schema: ResourceSearchInputSchema } },
    output: { 200: { description: 'The best matches, best first', schema: ResourceSearchResultSchema } },
    docs: {
      operationId: 'searchTenantResources',
      summary: "Search resources by their types' search fields",
      tag: 'Resources',
      description: "Ranks the tenant's resources of types that declare `searchFields` by the projection of those fields: `fulltext` (BM25), `vector` (cosine similarity of embeddings) or `hybrid` (their weighted sum, the default). Scores lie in 0..1, higher is better. Where no vector store is configured, `hybrid` ranks by full text (the answer's `mode` says so) and `vector` is a 400. A configured embedding model that fails to embed the query is 502.",
      errors: [502],
    },
    sample: { body: { query: 'route case', mode: 'fulltext' } },
    handler: ({ params, body, call, procedure }) => procedure.query(call(params.tenantId), jsonObjectBody(body)),
  }),
];
