import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { Context, Elysia } from 'elysia';
import type { z } from 'zod';
import type {
  AppRouter,
  CallContext,
  ControlPlane,
  Domain,
  PortInput,
  ProcedureName,
  SubscriptionName,
  UploadBody,
  UploadName,
} from '../../control-plane/contracts.ts';
import type { RateLimitGroup } from '../plugins/rate-limit.ts';
import type { RequestCalls } from '../request-context.ts';
import { renameBodyFields, withDocumentedField, withRenamedQuery, type FieldAliases } from './field-aliases.ts';

/**
 * One REST route, declared once beside its handler: its method and path, the procedure it calls,
 * what it takes (path, query, headers, body) and answers (each success status), its
 * documentation, and a sample request. The edge mounts the declarations (`mountRoutes`), the
 * OpenAPI documents describe them (api-edge/openapi/document.ts), the route-coverage suites call
 * each one with its sample (test/harness/routes.ts), and the CLI's wire types are generated from
 * those documents (cli/api/v4.d.ts).
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A rate-limit budget a route may declare (api-edge/plugins/rate-limit.ts); the rest spend `users`. */
export type RouteBudget = Extract<RateLimitGroup, 'resources' | 'uploads'>;

/**
 * Where a route's tenant comes from: the v3 `X-Tenant-Id` header (or the token), a v4 path
 * segment, v4's `tenant_id` query parameter or body field (else the caller's tenant), or none
 * (user and platform routes). The isolation suite calls each route as a member of another tenant.
 */
export type TenantFrom = 'header' | 'path' | 'query' | 'none';

/** A path, query or header parameter: its schema (the procedure's), and how it is written. */
export interface ParamDoc {
  schema: z.ZodType;
  description?: string;
  required?: boolean;
  /** The value is JSON text (`where={"status":"paid"}`). */
  json?: boolean;
  /** `filter[field]=value`: an object written as several parameters. */
  deepObject?: boolean;
}

export type ParamSpec = z.ZodType | ParamDoc;

/**
 * A JSON body (`required` unless said otherwise), the bytes of a file, or a `multipart/form-data`
 * form: its text fields (as text) and its file parts (`multiple`: the part may repeat, up to that many times).
 */
export type BodyDoc =
  | { schema: z.ZodType; required?: boolean; description?: string }
  | { binary: true; description: string }
  | { multipart: z.ZodObject; files: Record<string, { description: string; multiple?: number; required: boolean }>; description: string };

/** One success answer of a route. */
export interface ResponseDoc {
  description: string;
  /** The JSON body; none for 204 and 304. */
  schema?: z.ZodType;
  /** A `text/event-stream` body whose `data:` lines hold JSON of this schema (and, with `done`, the literal `[DONE]` last). */
  events?: z.ZodType;
  done?: boolean;
  /** Carries `X-Conversation-Id` and `X-Message-Id` (chat streams). */
  streamIds?: boolean;
  /** The body is a file's bytes, of the file's own media type. */
  binary?: boolean;
  /** Carries the resource's version as `ETag`. */
  etag?: boolean;
  /** A list page: carries `Content-Range` (its items' positions and total, `*` when estimated). */
  contentRange?: boolean;
  /** The body is a stream of server-sent events (`text/event-stream`). */
  eventStream?: boolean;
}

/** The names of a path template's parameters: `'/a/:tenantId/:id'` -> `'tenantId' | 'id'`. */
export type ParamName<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamName<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

type PathParams<Path extends string> = { [K in ParamName<Path>]: string };

/** What a route takes: every `:param` of its path by name, its query and header parameters, its body. */
export type RouteInput<Path extends string> = ([ParamName<Path>] extends [never] ? { path?: undefined } : { path: Record<ParamName<Path>, ParamSpec> }) & {
  query?: Record<string, ParamSpec>;
  headers?: Record<string, ParamSpec>;
  body?: BodyDoc;
};

/** What the documents say of a route beside its input and output. */
export interface RouteDocs {
  operationId: string;
  summary: string;
  /** One of the tags of its API (api-edge/openapi/document.ts). */
  tag: string;
  description?: string;
  /** Error statuses beyond those every route may answer (400, 401, 403, 404, 429, 500; 413 with a body method). */
  errors?: number[];
  /** Authenticated by something other than a user's token: a negotiated realtime token, or a webhook's signature (the description says how). */
  security?: 'realtimeToken' | 'webhookSignature';
}

/**
 * A request the route-coverage suites send (test/harness/routes.ts): path parameters that name
 * something a caller may use (`:tenantId` is filled by the test), a query string every call
 * carries (a dry run, say, so that nothing is provisioned), and the body of a route that reads one.
 */
export type RouteSample<Path extends string> = ([Exclude<ParamName<Path>, 'tenantId'>] extends [never]
  ? { params?: undefined }
  : { params: Record<Exclude<ParamName<Path>, 'tenantId'>, string> }) & {
  query?: string;
  body?: unknown;
};

/** An id that names nothing, for samples of routes that read or change one thing. */
export const NIL_ID = '00000000-0000-0000-0000-000000000000';

/** `domain.procedure`, as the control plane's router names each procedure. */
export type ProcedureRef = { [D in Domain]: `${D}.${ProcedureName<D>}` }[Domain];
type DomainOf<R extends ProcedureRef> = R extends `${infer D extends Domain}.${string}` ? D : never;
type NameOf<R extends ProcedureRef> = R extends `${DomainOf<R>}.${infer P extends ProcedureName<DomainOf<R>>}` ? P : never;

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;
type InputOf<R extends ProcedureRef> = PortInput<Inputs[DomainOf<R>][NameOf<R>]>;
type OutputOf<R extends ProcedureRef> = Outputs[DomainOf<R>][NameOf<R>];

/** The route's procedure, bound to the control plane: call it as the kind of procedure it is. */
export type BoundProcedure<R extends ProcedureRef> = {
  query(call: CallContext, input: InputOf<R>): Promise<OutputOf<R>>;
  mutation(call: CallContext, input: InputOf<R>): Promise<OutputOf<R>>;
} & (NameOf<R> extends SubscriptionName<DomainOf<R>>
  ? { subscription(call: CallContext, input: InputOf<R>, options?: { signal?: AbortSignal }): OutputOf<R> }
  : unknown) &
  (NameOf<R> extends UploadName<DomainOf<R>> ? { upload(call: CallContext, body: UploadBody): Promise<OutputOf<R>> } : unknown);

/** What the edge was started with that some routes read. */
export interface RouteOptions {
  /** How long an idle chat stream waits before a heartbeat comment. */
  sseHeartbeatMs?: number;
}

/** What a handler gets: the request, its path parameters and (JSON) body, the answer's status and headers, and the procedure. */
export interface RouteContext<Path extends string, R extends ProcedureRef> {
  request: Request;
  params: PathParams<Path>;
  /** The parsed JSON body, for a route that documents one; otherwise undefined (the body is not read). */
  body: unknown;
  set: Context['set'];
  /** The request's call context; `tenant` (a tenant the request names) overrides the tenant it named otherwise. */
  call(tenant?: string): CallContext;
  procedure: BoundProcedure<R>;
  /** The control plane, for a route that calls other procedures beside its own (an upload's cleanup, say). */
  controlPlane: ControlPlane;
  options: RouteOptions;
}

export interface RouteDeclaration<Path extends string, R extends ProcedureRef> {
  method: HttpMethod;
  /** The path under its API's base, Elysia's way: `/data/resources/:tenantId/:objectType`. */
  path: Path;
  /** The procedure the route calls (and, for a route that calls several, the one it is for). */
  procedure: R;
  tenant: TenantFrom;
  input: RouteInput<Path>;
  /** Each success status with what the route answers. */
  output: Record<number, ResponseDoc>;
  docs: RouteDocs;
  sample: RouteSample<Path>;
  /**
   * The rate-limit budget the route spends per tenant (or user): `resources` for the resource
   * engine's routes, `uploads` for document uploads; without it, the budget every other API shares.
   */
  rateLimit?: RouteBudget;
  /** `none`: the handler reads the request's body itself, as a stream (a file, a form, bytes a signature covers); the edge's JSON body limit does not apply. */
  parse?: 'none';
  /**
   * Request fields renamed to snake_case: each documented name with the camelCase name the route
   * shipped with (the procedure's), still accepted and documented as deprecated (field-aliases.ts).
   */
  aliases?: FieldAliases;
  handler(context: RouteContext<Path, R>): unknown;
}

/** A declared route, whatever its path and procedure. */
export interface Route {
  method: HttpMethod;
  path: string;
  procedure: ProcedureRef;
  tenant: TenantFrom;
  input: { path?: Record<string, ParamSpec>; query?: Record<string, ParamSpec>; headers?: Record<string, ParamSpec>; body?: BodyDoc };
  output: Record<number, ResponseDoc>;
  docs: RouteDocs;
  sample: { params?: Record<string, string>; query?: string; body?: unknown };
  rateLimit?: RouteBudget;
  parse?: 'none';
  aliases?: FieldAliases;
  handler(context: RouteContext<string, ProcedureRef>): unknown;
}

/** Declares a route; the compiler checks that its input names each path parameter and its sample fills them. */
export function defineRoute<const Path extends string, const R extends ProcedureRef>(route: RouteDeclaration<Path, R>): Route {
  return route;
}

/** Whether the edge parses the route's body as JSON for its handler: it documents a JSON body and does not read the stream itself. */
export const readsJsonBody = (route: Route) => route.parse !== 'none' && !!route.input.body && 'schema' in route.input.body;

function bind(controlPlane: ControlPlane, ref: ProcedureRef): BoundProcedure<ProcedureRef> {
  const [domain, name] = ref.split('.') as [never, never];
  return {
    query: (call: CallContext, input: never) => controlPlane.query(call, domain, name, input),
    mutation: (call: CallContext, input: never) => controlPlane.mutation(call, domain, name, input),
    subscription: (call: CallContext, input: never, options?: { signal?: AbortSignal }) => controlPlane.subscription(call, domain, name, input, options),
    upload: (call: CallContext, body: UploadBody) => controlPlane.upload(call, domain, name, body),
  } as BoundProcedure<ProcedureRef>;
}

/**
 * Mounts routes on `app` (under its prefix). Elysia reads a handler's parameters to decide what to
 * parse, so a route's body is parsed only where it documents a JSON body, as each route's own
 * handler once asked for it.
 */
export function mountRoutes(app: Elysia<string>, routes: readonly Route[], deps: { controlPlane: ControlPlane; calls: RequestCalls; options?: RouteOptions }): void {
  const { controlPlane, calls, options = {} } = deps;
  for (const route of routes) {
    const procedure = bind(controlPlane, route.procedure);
    const { aliases } = route;
    if (aliases && route.parse === 'none') throw new Error(`${route.method} ${route.path} reads its own body: its fields cannot be renamed before it`);
    // The call context is the request's as it came; the handler reads it with renamed fields.
    const handle = (request: Request, asRenamed: Request, params: Record<string, string>, set: Context['set'], json: unknown) =>
      route.handler({ request: asRenamed, params, body: json, set, call: (tenant) => calls.of(request, tenant), procedure, controlPlane, options });
    const run = !aliases
      ? (request: Request, params: Record<string, string>, set: Context['set'], json: unknown) => handle(request, request, params, set, json)
      : async (request: Request, params: Record<string, string>, set: Context['set'], json: unknown) => {
          try {
            return await handle(request, withRenamedQuery(request, aliases), params, set, renameBodyFields(json, aliases));
          } catch (error) {
            // An input error names the field as the documents do.
            throw withDocumentedField(error, aliases);
          }
        };
    const handler = readsJsonBody(route)
      ? ({ request, params, body, set }: Context) => run(request, params, set, body)
      : ({ request, params, set }: Context) => run(request, params, set, undefined);
    app.route(route.method, route.path, handler, route.parse ? { parse: route.parse } : undefined);
  }
}
