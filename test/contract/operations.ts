import { APIS, buildOpenApiDocument, type ApiVersion } from '../../api-edge/openapi/document.ts';
import { ROUTE_CASES, type RouteCase } from '../harness/routes.ts';

/**
 * Every operation the OpenAPI documents describe, read from the documents themselves (not from a
 * list of routes), so that a route documented tomorrow is fuzzed and checked tomorrow.
 */

export type JsonSchema = Record<string, any>;

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
  /** Written as JSON text (`where={"a":1}`). */
  json: boolean;
  /** `filter[field]=value`. */
  deepObject: boolean;
}

export interface DocumentedOperation {
  version: ApiVersion;
  operationId: string;
  method: string;
  /** The path as the documents write it, under the API's base: `/resources/{type}/{id}`. */
  openApiPath: string;
  /** `METHOD /full/path/:param`, as the edge's route table and the route declarations (api-edge/routes) name it. */
  route: string;
  /** The full path with `:param` placeholders. */
  template: string;
  parameters: OperationParameter[];
  body?: { required: boolean; mediaType: 'application/json' | 'application/octet-stream'; schema: JsonSchema };
  /** Whether the document asks for authentication (an empty `security` list means none). */
  authenticated: boolean;
  /** The security schemes any of which authenticates a call (`bearer`, `realtimeToken`, `webhookSignature`...). */
  schemes: string[];
  /** How tests call the route: its declaration's sample (test/harness/routes.ts); undefined for a route not declared. */
  case?: RouteCase;
}

const documents = new Map<ApiVersion, JsonSchema>();

/** The OpenAPI document of `version`, built once per process. */
export function openApiDocument(version: ApiVersion): JsonSchema {
  let document = documents.get(version);
  if (!document) documents.set(version, (document = buildOpenApiDocument(version)));
  return document;
}

/** Follows `$ref`s to `#/...` inside `document`. */
export function deref<T = JsonSchema>(document: JsonSchema, value: any): T {
  let node = value;
  for (let hops = 0; node && typeof node.$ref === 'string' && node.$ref.startsWith('#/'); hops++) {
    if (hops > 20) throw new Error(`a cycle of $refs at ${value.$ref}`);
    node = (node.$ref as string)
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((n: any, key) => n?.[key], document);
  }
  return node as T;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Every documented operation of v3 and v4. */
export function documentedOperations(): DocumentedOperation[] {
  return (['v3', 'v4'] as const).flatMap((version) => {
    const document = openApiDocument(version);
    const base = APIS[version].base;
    return Object.entries(document.paths as Record<string, JsonSchema>).flatMap(([openApiPath, item]) =>
      METHODS.filter((m) => item[m]).map((m): DocumentedOperation => {
        const operation = item[m] as JsonSchema;
        const template = base + openApiPath.replace(/\{([A-Za-z]+)\}/g, ':$1');
        const route = `${m.toUpperCase()} ${template}`;
        const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: JsonSchema): OperationParameter => {
          const param = deref(document, p);
          const json = !!param.content?.['application/json'];
          return {
            name: param.name,
            in: param.in,
            required: !!param.required,
            schema: json ? param.content['application/json'].schema : (param.schema ?? {}),
            json,
            deepObject: param.style === 'deepObject',
          };
        });
        const content = operation.requestBody ? deref(document, operation.requestBody) : undefined;
        const mediaType = content?.content?.['application/json'] ? 'application/json' : content?.content?.['application/octet-stream'] ? 'application/octet-stream' : undefined;
        const security = (operation.security ?? document.security ?? []) as unknown[];
        return {
          version,
          operationId: operation.operationId,
          method: m.toUpperCase(),
          openApiPath,
          route,
          template,
          parameters,
          body: mediaType ? { required: content!.required ?? false, mediaType, schema: content!.content[mediaType].schema } : undefined,
          authenticated: security.length > 0 && !security.some((s) => s && Object.keys(s).length === 0),
          schemes: security.flatMap((s) => Object.keys(s as object)),
          case: Object.hasOwn(ROUTE_CASES, route) ? ROUTE_CASES[route] : undefined,
        };
      }),
    );
  });
}
