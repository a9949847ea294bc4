import { untrusted, ValidationError, type Untrusted } from '../../control-plane/contracts.ts';

/** A JSON object from a request, passed on for the procedure to check. */
export type UntrustedObject = Record<string, unknown> & Untrusted;

/** A request body that must be a JSON object. */
export function jsonObjectBody(body: unknown): UntrustedObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('request body must be a JSON object', { field: '(body)', issue: 'must be a JSON object' });
  }
  return untrusted(body as Record<string, unknown>);
}

/** An optional JSON object body: none (or empty) means every default. */
export const optionalObject = (body: unknown): UntrustedObject =>
  body === undefined || body === '' || body === null ? untrusted({}) : jsonObjectBody(body);

/** A query parameter's one value; a name given twice is a 400 rather than one value silently kept. */
export function queryValue(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw ValidationError.field(name, 'is given more than once');
  return values[0];
}

/** A query parameter's one value, passed on for the procedure to check against what it takes (an enum, say). */
export const untrustedQueryValue = (params: URLSearchParams, name: string) => untrusted(queryValue(params, name));

/** A query parameter holding JSON (`where={"status":"paid"}`), parsed and passed on for the procedure to check. */
export function jsonQueryValue(params: URLSearchParams, name: string): Untrusted | undefined {
  const text = queryValue(params, name);
  if (text === undefined) return undefined;
  try {
    return untrusted(JSON.parse(text) as unknown);
  } catch {
    throw ValidationError.field(name, 'must be JSON');
  }
}

/**
 * A request's options from its body and its query string alike, so that an option sent in either
 * place is obeyed, never silently dropped; the procedure's strict schema refuses unknown names. A
 * name given in both places, or twice in the query string, is a 400. `flags` are booleans, read
 * from the query string as `true` or `false`. Every name is defined as an own key (`__proto__`
 * included), so the procedure's input check sees it.
 */
export function bodyAndQueryOptions(request: Request, body: unknown, flags: ReadonlySet<string> = new Set()): UntrustedObject {
  const options = untrusted({ ...optionalObject(body) });
  const params = new URL(request.url).searchParams;
  for (const name of new Set(params.keys())) {
    const value = queryValue(params, name)!;
    if (Object.hasOwn(options, name)) throw ValidationError.field(name, 'is given in both the query string and the body');
    Object.defineProperty(options, name, {
      value: flags.has(name) && (value === 'true' || value === 'false') ? value === 'true' : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return options;
}

/**
 * A JSON object body with the path's parameters beside its fields; a body field that the path
 * gives is a 400 rather than one of the two silently winning.
 */
export function bodyWithPath(body: unknown, path: Record<string, unknown>): UntrustedObject {
  const fields = jsonObjectBody(body);
  for (const name of Object.keys(path)) {
    if (Object.hasOwn(fields, name)) throw ValidationError.field(name, 'is given by the path, not the body');
  }
  return untrusted({ ...fields, ...path });
}

/** The entity tag of a resource version, as `ETag` sends it and `If-Match`/`If-None-Match` name it. */
export const etagOf = (version: number) => `"${version}"`;

/** What `If-Match` and `If-None-Match` may hold: `*`, or one version (`"3"`, `W/"3"`, `3`). */
export const VERSION_TAG = /^(?:\*|(?:W\/)?"?[1-9]\d{0,9}"?)$/;

/**
 * The version an `If-Match` or `If-None-Match` header names: `"3"` (or `W/"3"`, or `3`) is 3, `*`
 * is any; undefined without the header. Anything else, or several tags, is a 400 naming the header.
 */
export function versionTag(request: Request, header: 'If-Match' | 'If-None-Match'): number | '*' | undefined {
  const value = request.headers.get(header)?.trim();
  if (value === undefined) return undefined;
  if (value === '*') return '*';
  if (!VERSION_TAG.test(value)) throw ValidationError.field(header, 'must name one version, such as "3"');
  return Number(/[1-9]\d*/.exec(value)![0]);
}

/**
 * The tenant a request names with `tenant_id` in its query string or its JSON body (v4 routes
 * without a tenant in the path), and the body without it.
 */
export function tenantOption(request: Request, body: unknown): { tenantId: string | undefined; body: unknown } {
  const fromQuery = queryValue(new URL(request.url).searchParams, 'tenant_id');
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, 'tenant_id')) return { tenantId: fromQuery, body };
  const { tenant_id: fromBody, ...rest } = body as Record<string, unknown>;
  if (fromQuery !== undefined) throw ValidationError.field('tenant_id', 'is given in both the query string and the body');
  if (typeof fromBody !== 'string' || fromBody === '') throw ValidationError.field('tenant_id', 'must be a tenant id or slug');
  return { tenantId: fromBody, body: rest };
}

/**
 * The `Idempotency-Key` header as the procedure's `idempotencyKey` (undefined without one). Pass it
 * with the path's parameters (`bodyWithPath`), so that a body cannot name a key of its own.
 */
export const idempotencyKeyOf = (request: Request): { idempotencyKey: string | undefined } => ({ idempotencyKey: request.headers.get('Idempotency-Key') ?? undefined });
