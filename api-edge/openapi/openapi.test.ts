import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { apiRouteTable } from '../app.ts';
import { APIS, buildOpenApiDocument, openApiPath, type ApiVersion } from './document.ts';
import { OPENAPI_PATHS } from './reference.ts';

const VERSIONS: ApiVersion[] = ['v3', 'v4'];
const documented = VERSIONS.flatMap((version) => APIS[version].routes.map((route) => `${route.method} ${APIS[version].base}${route.path}`));

describe('the OpenAPI documents', () => {
  it.each(VERSIONS)('%s is a valid OpenAPI 3.1 document', async (version) => {
    const document = buildOpenApiDocument(version);
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('describe every route the edge serves (declare it with defineRoute in its api-edge/routes module)', () => {
    const undocumented = apiRouteTable().filter((route) => !documented.includes(route));
    expect(undocumented).toEqual([]);
  });

  it('describe no route the edge does not serve', () => {
    const served = new Set(apiRouteTable());
    expect(documented.filter((route) => !served.has(route))).toEqual([]);
  });

  it('name each path parameter of a route, and no other', () => {
    for (const version of VERSIONS) {
      const { base, routes } = APIS[version];
      const document = buildOpenApiDocument(version) as { paths: Record<string, Record<string, { parameters?: Array<{ in?: string; name?: string }> }>> };
      for (const route of routes) {
        const operation = document.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
        const inPath = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        expect(inPath.sort(), `${route.method} ${base}${route.path}`).toEqual([...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]).sort());
      }
    }
  });

  it('tag every operation with one of its API\'s tags, and give each a distinct operationId', () => {
    for (const version of VERSIONS) {
      const { routes, tags } = APIS[version];
      expect(routes.filter((route) => !tags.some((tag) => tag.name === route.docs.tag)).map((route) => `${route.method} ${route.path}: ${route.docs.tag}`)).toEqual([]);
      const ids = routes.map((route) => route.docs.operationId);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    }
  });

  it('give every operation the rate-limit headers and the error body', () => {
    const document = buildOpenApiDocument('v4') as { paths: Record<string, Record<string, { responses: Record<string, { headers?: object; $ref?: string }> }>> };
    for (const operations of Object.values(document.paths)) {
      for (const { responses } of Object.values(operations)) {
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) >= 400) expect(response.$ref).toMatch(/^#\/components\/responses\//);
          else expect(Object.keys(response.headers ?? {})).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
        }
      }
    }
  });

  it('are served beside the API routes, not among them', () => {
    const table = apiRouteTable();
    for (const path of Object.values(OPENAPI_PATHS)) expect(table).not.toContain(`GET ${path}`);
  });
});
