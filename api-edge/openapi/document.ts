import { z } from 'zod';
import {
  AppErrorBodySchema,
  HTTP_STATUS,
  MembershipSchema,
  MeSchema,
  ObjectTypeSchema,
  ResourceSchema,
  StorageStatusSchema,
  TenantMembershipSchema,
  TenantSchema,
  UserSchema,
  WEBHOOK_HEADERS,
  type ErrorCode,
} from '../../control-plane/contracts.ts';
import { PROVIDER_ROUTES } from '../identity/provider-routes.ts';
import { SESSION_COOKIE } from '../plugins/auth.ts';
import { BODY_METHODS } from '../plugins/body-limit.ts';
import { V3_BASE, V4_BASE } from '../routes/bases.ts';
import { API_ROUTES } from '../routes/index.ts';
import type { FieldAliases } from '../routes/field-aliases.ts';
import type { ParamDoc, ParamSpec, Route } from '../routes/route.ts';
import { V3ExecutionSchema, V3ResourceSchema } from '../routes/v3/shape.ts';

/**
 * The OpenAPI 3.1 documents of v3 and v4, generated from the routes' declarations
 * (api-edge/routes, `defineRoute`): every schema is converted from zod with `z.toJSONSchema` (draft
 * 2020-12), request schemas as the procedures take them (`io: 'input'`), response schemas as the
 * edge renders them (`io: 'output'`).
 */

export type ApiVersion = 'v3' | 'v4';

type Json = Record<string, unknown>;

interface ApiDescription {
  base: string;
  title: string;
  version: string;
  description: string;
  routes: readonly Route[];
  /** Names of the response schemas several routes share, as the document's components call them. */
  schemaNames: Array<[z.ZodType, string]>;
  tags: Array<{ name: string; description: string }>;
}

export const APIS: Record<ApiVersion, ApiDescription> = {
  v3: {
    base: V3_BASE,
    title: 'REST API v3',
    version: '3',
    description: 'The browser-facing API: resources, users, orchestrate, documents and chat. Browsers call it through the backend-for-frontend session; other clients send a bearer token.',
    routes: API_ROUTES.v3.routes,
    schemaNames: [
      [V3ResourceSchema, 'Resource'],
      [UserSchema, 'User'],
      [V3ExecutionSchema, 'Execution'],
    ],
    tags: [
      { name: 'Resources', description: 'Resources of the tenant, by object type' },
      { name: 'Users', description: 'Members of the tenant' },
      { name: 'Orchestrate', description: 'Workflow definitions and their executions' },
      { name: 'Documents', description: 'Uploaded documents: classification, indexing for retrieval, search' },
      { name: 'Chat', description: "AI answers from the tenant's documents and resources, streamed, in the caller's conversations" },
    ],
  },
  v4: {
    base: V4_BASE,
    title: 'Platform API v4',
    version: '4',
    description:
      "The platform API: identity, tenants and apps, and data (object types, resources, files, storage, documents). Outside this base, unauthenticated: `GET /health` (the gateway's health: 200, or 503 while the control plane or database does not answer), `GET /health/ready` (the readiness probe, the same) and `GET /health/live` (the liveness probe: 200 while the process answers, whatever the database does).",
    routes: API_ROUTES.v4.routes,
    schemaNames: [
      [ResourceSchema, 'Resource'],
      [MembershipSchema, 'Membership'],
      [TenantMembershipSchema, 'TenantMembership'],
      [TenantSchema, 'Tenant'],
      [ObjectTypeSchema, 'ObjectType'],
      [MeSchema, 'Me'],
      [StorageStatusSchema, 'StorageStatus'],
    ],
    tags: [
      { name: 'Identity', description: "The caller's own record and tenants" },
      { name: 'Platform', description: 'Tenants, apps and user grants' },
      { name: 'Capabilities', description: 'What each plan includes, and per-tenant overrides' },
      { name: 'Storage', description: "A tenant's storage backends" },
      { name: 'Object types', description: "A tenant's object types" },
      { name: 'Resources', description: 'Resources of a tenant, by object type' },
      { name: 'Batches', description: 'Many resources at once, all or none' },
      { name: 'Files', description: 'File properties of resources' },
      { name: 'Realtime', description: "A tenant's resource changes as they happen (server-sent events)" },
      { name: 'Webhooks', description: 'Signed inbound webhooks that start workflows' },
      { name: 'AI', description: 'Chat per workflow and stage' },
      { name: 'Workflows', description: 'Runtime status of workflows and requests for a binding' },
      { name: 'Integrations', description: 'Readiness for builders' },
      { name: 'Geo', description: 'Place lookup (GeoNames, CC BY 4.0) and GeoJSON datasets of a tenant' },
      { name: 'Identity-provider apps', description: "Apps' OAuth clients at the identity provider" },
      { name: 'Configuration', description: "Apps' configuration per environment, secrets sealed at rest, audited" },
      { name: 'Verticals', description: "An enrolled app's surface: its enrollment, object types and resources" },
      { name: 'Documents', description: 'Document uploads, classification and indexing jobs' },
    ],
  },
};

/** Error statuses every route may answer; body methods also 413. */
const COMMON_ERRORS = [400, 401, 403, 404, 429, 500, 503];

const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'The request is invalid (`VALIDATION_ERROR`, with `details.field` and `details.issue`)' },
  401: { name: 'Unauthorized', description: 'No valid authentication (`UNAUTHORIZED`)' },
  403: { name: 'Forbidden', description: 'Insufficient permissions (`FORBIDDEN`)' },
  404: { name: 'NotFound', description: 'Not found (`NOT_FOUND`)' },
  409: { name: 'Conflict', description: 'Conflicts with the stored state (`CONFLICT`, `VERSION_CONFLICT`, `SCHEMA_INCOMPATIBLE`)' },
  413: { name: 'PayloadTooLarge', description: 'The body is too large (`PAYLOAD_TOO_LARGE`, `FILE_TOO_LARGE`; `details.limit` in bytes)' },
  415: { name: 'UnsupportedMediaType', description: 'The file type is not accepted (`UNSUPPORTED_FILE_TYPE`)' },
  428: { name: 'PreconditionRequired', description: 'The version being replaced is required (`PRECONDITION_REQUIRED`)' },
  429: { name: 'TooManyRequests', description: 'Rate limit exceeded (`RATE_LIMIT_EXCEEDED`, with `retryAfter` in seconds)' },
  500: { name: 'InternalError', description: 'An unexpected error (`INTERNAL_ERROR`)' },
  501: { name: 'NotImplemented', description: 'This deployment does not offer it (`NOT_IMPLEMENTED`)' },
  502: { name: 'BadGateway', description: 'A service the platform relies on failed (`BAD_GATEWAY`)' },
  503: { name: 'ServiceUnavailable', description: 'The database or the control plane is unavailable for a moment (`SERVICE_UNAVAILABLE`, with `retryAfter` in seconds): nothing acknowledged; retry, a write with its `Idempotency-Key`' },
};

/** The error codes each status carries. */
const codesOf = (status: number) => (Object.keys(HTTP_STATUS) as ErrorCode[]).filter((code) => HTTP_STATUS[code] === status);

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers, as components; every answer carries the rate-limit headers (a 429 also Retry-After). */
const HEADERS: Json = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window', required: true, schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', required: true, schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window ends, in Unix epoch seconds', required: true, schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer' } },
  ETag: { description: 'The resource version, as an entity tag (`"3"`)', required: true, schema: { type: 'string' } },
  'Content-Range': {
    description: 'The page\'s items and the total: `0-19/2500`; `0-19/*` when the total is an estimate (`totalExact: false`); `*/0` for an empty page',
    required: true,
    schema: { type: 'string' },
  },
  'X-Conversation-Id': { description: 'The conversation the answer belongs to', required: true, schema: { type: 'string' } },
  'X-Message-Id': { description: 'The answer (an assistant message); resume its events with it', required: true, schema: { type: 'string' } },
};
const RATE_LIMIT_HEADERS = Object.fromEntries(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map((name) => [name, ref('headers', name)]));
const RETRY_AFTER = ref('headers', 'Retry-After');
const ETAG = ref('headers', 'ETag');
const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * A tuple's length as `minItems`/`maxItems` rather than `items: false` after its `prefixItems`: the
 * same in JSON Schema 2020-12, and read alike by validators that predate `prefixItems` (Stoplight
 * Prism), which took `items: false` to refuse every element of a bounding box.
 */
const tupleLength = ({ jsonSchema: schema }: { jsonSchema: Json }) => {
  if (Array.isArray(schema.prefixItems) && schema.items === false) {
    delete schema.items;
    schema.minItems = schema.maxItems = schema.prefixItems.length;
  }
};

/** A JSON Schema of a zod schema, as an OpenAPI schema object (no `$schema`, no `$id`). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, $id: __, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any', override: tupleLength }) as Json;
  return rest;
}

const asParam = (spec: ParamSpec): ParamDoc => (spec instanceof z.ZodType ? { schema: spec } : spec);

/** An OpenAPI parameter: required unless its schema takes nothing, with the default it gets then. */
function parameter(name: string, where: 'path' | 'query' | 'header', spec: ParamSpec): Json {
  const doc = asParam(spec);
  const absent = doc.schema.safeParse(undefined);
  const required = where === 'path' || (doc.required ?? !absent.success);
  const schema = jsonSchema(doc.schema, 'input');
  if (absent.success && absent.data !== undefined && !doc.json) schema.default = absent.data;
  const form = doc.json ? { content: { 'application/json': { schema } } } : doc.deepObject ? { style: 'deepObject', explode: true, schema } : { schema };
  return { name, in: where, required, ...(doc.description ? { description: doc.description } : {}), ...form };
}

const deprecation = (name: string) => `Deprecated: the former name of \`${name}\`, still accepted in its place (not both, unless with the same value).`;

/** A body schema with each renamed field under its documented name, and its former name beside it, deprecated. */
function withAliases(schema: Json, aliases: FieldAliases): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return schema;
  const documentedOf = (name: string) => Object.keys(aliases).find((documented) => aliases[documented] === name);
  const entries = Object.entries(properties).flatMap(([name, property]) => {
    const documented = documentedOf(name);
    return documented ? [[documented, property], [name, { ...property, deprecated: true, description: deprecation(documented) }]] : [[name, property]];
  });
  const required = (schema.required as string[] | undefined)?.map((name) => documentedOf(name) ?? name);
  return { ...schema, properties: Object.fromEntries(entries), ...(required ? { required } : {}) };
}

/** A route's path (under its API's base) as OpenAPI writes it: `/resources/:type/:id` -> `/resources/{type}/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

/** Named schemas, converted together so that one used by another is a `$ref` to its component. */
class Components {
  readonly inputs = z.registry<{ id: string }>();
  readonly outputs = z.registry<{ id: string }>();
  /** Request components whose fields were renamed, with the renames. */
  readonly renamed = new Map<string, FieldAliases>();

  /** A reference to the schema's component, registering it under `name` when it has none yet. */
  use(schema: z.ZodType, io: 'input' | 'output', name: string): Json {
    const registry = io === 'input' ? this.inputs : this.outputs;
    const known = registry.get(schema);
    if (known) return ref('schemas', known.id);
    registry.add(schema, { id: name });
    return ref('schemas', name);
  }

  schemas(): Json {
    const convert = (registry: z.core.$ZodRegistry<{ id: string }>, io: 'input' | 'output') => {
      const { schemas } = z.toJSONSchema(registry, { io, target: 'draft-2020-12', unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}`, override: tupleLength });
      return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _, $id: __, ...rest }]) => [id, rest as Json]));
    };
    const inputs = convert(this.inputs, 'input');
    for (const [id, aliases] of this.renamed) inputs[id] = withAliases(inputs[id]!, aliases);
    const outputs = convert(this.outputs, 'output');
    for (const id of Object.keys(inputs)) {
      if (Object.hasOwn(outputs, id)) throw new Error(`the OpenAPI component ${id} names both a request and a response schema`);
    }
    return { ...inputs, ...outputs };
  }
}

/** A `multipart/form-data` body: the text fields' schema, and a binary property (or a list of them) per file part. */
function formSchema(fields: z.ZodObject, files: Record<string, { description: string; multiple?: number; required: boolean }>): Json {
  const schema = jsonSchema(fields, 'input');
  const binary = { type: 'string', format: 'binary' };
  // A part that may repeat is one file, or several parts of one name: validators that read a
  // single part as one value, rather than a list of one, accept it too.
  const several = (file: { description: string; multiple?: number }) => ({ anyOf: [binary, { type: 'array', items: binary, maxItems: file.multiple }], description: file.description });
  const properties = { ...(schema.properties as Json), ...Object.fromEntries(Object.entries(files).map(([name, file]) => [name, file.multiple ? several(file) : { ...binary, description: file.description }])) };
  const required = [...((schema.required as string[] | undefined) ?? []), ...Object.entries(files).filter(([, file]) => file.required).map(([name]) => name)];
  return { ...schema, properties, ...(required.length ? { required } : {}) };
}

function operation(route: Route, components: Components, shared: Json[]): Json {
  const { method, input, output, docs: doc } = route;
  const parameters = [
    ...Object.entries(input.path ?? {}).map(([name, spec]) => parameter(name, 'path', spec)),
    ...Object.entries(input.query ?? {}).flatMap(([name, spec]) => {
      const former = route.aliases?.[name];
      return former ? [parameter(name, 'query', spec), { ...parameter(former, 'query', spec), required: false, deprecated: true, description: deprecation(name) }] : [parameter(name, 'query', spec)];
    }),
    ...Object.entries(input.headers ?? {}).map(([name, spec]) => parameter(name, 'header', spec)),
    ...shared,
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(output)) {
    const headers = {
      ...RATE_LIMIT_HEADERS,
      ...(response.etag ? { ETag: ETAG } : {}),
      ...(response.contentRange ? { 'Content-Range': ref('headers', 'Content-Range') } : {}),
      ...(response.streamIds ? { 'X-Conversation-Id': ref('headers', 'X-Conversation-Id'), 'X-Message-Id': ref('headers', 'X-Message-Id') } : {}),
    };
    const content = response.schema
      ? { 'application/json': { schema: components.use(response.schema, 'output', `${pascal(doc.operationId)}Response`) } }
      : response.binary
        ? { '*/*': { schema: { type: 'string', format: 'binary' } } }
        : response.events
          ? {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: `Server-sent events: each is \`id: <n>\` and one \`data:\` line holding JSON (\`x-event-schema\`)${response.done ? ', and the last line is the literal `data: [DONE]`' : ''}.`,
                },
                'x-event-schema': components.use(response.events, 'output', 'ChatEvent'),
              },
            }
          : response.eventStream
            ? { 'text/event-stream': { schema: { type: 'string' } } }
          : undefined;
    responses[status] = { description: response.description, headers, ...(content ? { content } : {}) };
  }
  const requestSchema = (schema: z.ZodType) => {
    const reference = components.use(schema, 'input', `${pascal(doc.operationId)}Request`);
    if (route.aliases) components.renamed.set(String(reference.$ref).split('/').pop()!, route.aliases);
    return reference;
  };
  const errors = [...COMMON_ERRORS, ...(BODY_METHODS.has(method) ? [413] : []), ...(doc.errors ?? [])].sort((a, b) => a - b);
  for (const status of errors) responses[status] = ref('responses', ERROR_RESPONSES[status]!.name);
  const body = input.body;
  const requestBody = !body
    ? undefined
    : 'binary' in body
      ? { required: true, description: body.description, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } } } }
      : 'multipart' in body
        ? { required: true, description: body.description, content: { 'multipart/form-data': { schema: formSchema(body.multipart, body.files) } } }
        : {
          required: body.required ?? true,
          ...(body.description ? { description: body.description } : {}),
          content: { 'application/json': { schema: requestSchema(body.schema) } },
        };
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    ...(doc.security ? { security: [{ [doc.security]: [] }] } : {}),
  };
}

/** The OpenAPI 3.1 document of v3 or v4. */
export function buildOpenApiDocument(version: ApiVersion): Json {
  const api = APIS[version];
  const components = new Components();
  components.use(AppErrorBodySchema, 'output', 'Error');
  const errorBody = components.use(z.object({ error: AppErrorBodySchema }), 'output', 'ErrorBody');
  for (const [schema, name] of api.schemaNames) components.use(schema, 'output', name);
  const shared = version === 'v3' ? [ref('parameters', 'TenantHeader')] : [];
  const paths: Record<string, Json> = {};
  for (const route of api.routes) {
    const path = openApiPath(route.path);
    if (paths[path]?.[route.method.toLowerCase()]) throw new Error(`${route.method} ${api.base}${route.path} is declared twice`);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, components, shared);
  }
  // Only the components some operation names: a document lists nothing it does not use.
  const used = JSON.stringify(paths);
  const responses = Object.fromEntries(
    Object.entries(ERROR_RESPONSES)
      .filter(([, { name }]) => used.includes(`"#/components/responses/${name}"`))
      .map(([status, { name, description }]) => [
        name,
        {
          description: `${description}; codes: ${codesOf(Number(status)).join(', ')}`,
          headers: { ...RATE_LIMIT_HEADERS, ...(status === '429' || status === '503' ? { 'Retry-After': RETRY_AFTER } : {}) },
          content: { 'application/json': { schema: errorBody } },
        },
      ]),
  );
  const securitySchemes: Json = {
    bearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'An access token of the identity provider, verified as RFC 8725 recommends: RS256 or ES256 only (never `none`), signed by a key of the issuer, with the issuer, audience and expiry checked',
    },
    oauth2: {
      type: 'oauth2',
      description: 'Authorization code with PKCE (S256) against the identity provider on this origin',
      flows: {
        authorizationCode: {
          authorizationUrl: PROVIDER_ROUTES.authorization,
          tokenUrl: PROVIDER_ROUTES.token,
          scopes: { openid: 'The user id', email: 'The e-mail address', profile: 'Name and tenant', offline_access: 'A refresh token' },
        },
      },
    },
    ...(version === 'v3' ? { session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The backend-for-frontend session, `__Host-svc_session` when the platform is served over https (state-changing calls send the CSRF cookie’s value in X-CSRF-Token)' } } : {}),
    ...(version === 'v4'
      ? {
          realtimeToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'A connection token of `POST /realtime/negotiate`: one tenant, its channels, one connection within a minute; verified as RFC 8725 recommends (HS256 under the platform key its `kid` names, which only the platform holds and which rotates, issuer, audience and expiry checked). Browsers send it as `?token=`, as EventSource sends no header.',
          },
          webhookSignature: {
            type: 'apiKey',
            in: 'header',
            name: WEBHOOK_HEADERS.signature,
            description: `The HMAC-SHA256 of \`<${WEBHOOK_HEADERS.timestamp}>.<body>\`, keyed by the endpoint's secret`,
          },
        }
      : {}),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: api.title,
      version: api.version,
      description: api.description,
      contact: { name: 'The operators of this installation' },
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    // Relative: the origin the document is served from, HTTPS in production (docs/decisions/0113-generated-openapi.md).
    servers: [{ url: api.base, description: 'This installation' }],
    security: [{ bearer: [] }, { oauth2: ['openid', 'email', 'profile'] }, ...(version === 'v3' ? [{ session: [] }] : [])],
    tags: [...api.tags].sort((a, b) => a.name.localeCompare(b.name)),
    paths,
    components: {
      schemas: components.schemas(),
      responses,
      headers: Object.fromEntries(Object.entries(HEADERS).filter(([name]) => name === 'Retry-After' || used.includes(`"#/components/headers/${name}"`))),
      parameters:
        version === 'v3'
          ? { TenantHeader: { name: 'X-Tenant-Id', in: 'header', required: false, description: "The tenant acted in (id or slug); default: the token's", schema: { type: 'string', minLength: 1, maxLength: 200 } } }
          : {},
      securitySchemes,
    },
  };
}

const built = new Map<ApiVersion, string>();

/** The document as JSON text, built once per process. */
export function openApiJson(version: ApiVersion): string {
  let text = built.get(version);
  if (!text) built.set(version, (text = JSON.stringify(buildOpenApiDocument(version))));
  return text;
}
