import { isDeepStrictEqual } from 'node:util';
import { untrusted, ValidationError } from '../../control-plane/contracts.ts';
import { toErrorResponse } from '../errors.ts';

/**
 * The request fields of a route that were renamed to snake_case (v4's convention, as seed 001
 * writes `tenant_id` and `workflow_key`): each documented snake_case name, with the camelCase
 * name the route shipped with and still accepts, deprecated. The procedure takes the camelCase
 * name; the edge renames before the handler runs, in the JSON body and the query string alike.
 */
export type FieldAliases = Readonly<Record<string, string>>;

const conflict = (name: string, alias: string) => ValidationError.field(name, `is given twice, also as its deprecated name ${alias}, with another value`);

/** A JSON object body with each snake_case field under the procedure's name; both names with different values are a 400. */
export function renameBodyFields(body: unknown, aliases: FieldAliases): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  if (!Object.keys(aliases).some((name) => Object.hasOwn(fields, name))) return body;
  // Copied by descriptors, so that a `__proto__` key stays an own field for the procedure's check.
  const renamed = Object.defineProperties({}, Object.getOwnPropertyDescriptors(fields)) as Record<string, unknown>;
  for (const [name, alias] of Object.entries(aliases)) {
    if (!Object.hasOwn(renamed, name)) continue;
    const value = renamed[name];
    if (Object.hasOwn(renamed, alias) && !isDeepStrictEqual(renamed[alias], value)) throw conflict(name, alias);
    delete renamed[name];
    Object.defineProperty(renamed, alias, { value, enumerable: true, writable: true, configurable: true });
  }
  return untrusted(renamed);
}

/** The query string with each snake_case parameter under the procedure's name; undefined when it names none of them. */
export function renameQueryParams(url: URL, aliases: FieldAliases): URL | undefined {
  const params = url.searchParams;
  if (!Object.keys(aliases).some((name) => params.has(name))) return undefined;
  const renamed = new URL(url);
  for (const [name, alias] of Object.entries(aliases)) {
    if (!params.has(name)) continue;
    const values = params.getAll(name);
    const former = params.getAll(alias);
    if (former.length > 0 && !isDeepStrictEqual(former, values)) throw conflict(name, alias);
    renamed.searchParams.delete(name);
    renamed.searchParams.delete(alias);
    for (const value of values) renamed.searchParams.append(alias, value);
  }
  return renamed;
}

/**
 * A request whose query string names the procedure's fields, for the handler: the same method,
 * headers and signal (a route that renames query parameters reads its body as parsed JSON, never
 * from the request itself).
 */
export function withRenamedQuery(request: Request, aliases: FieldAliases): Request {
  const url = renameQueryParams(new URL(request.url), aliases);
  return url ? new Request(url, { method: request.method, headers: request.headers, signal: request.signal }) : request;
}

/**
 * An error whose `details.field` names a field by the procedure's name, renamed to the documented
 * snake_case name (an input error's message too); other errors as they are. It is answered as the
 * control plane's errors are, from its `appError`.
 */
export function withDocumentedField(error: unknown, aliases: FieldAliases): unknown {
  const body = toErrorResponse(error).body.error;
  const field = body.details?.field;
  if (typeof field !== 'string') return error;
  const [head = '', ...rest] = field.split('.');
  const documented = Object.keys(aliases).find((name) => aliases[name] === head);
  if (!documented) return error;
  const renamed = [documented, ...rest].join('.');
  const issue = body.details?.issue;
  const message = body.code === 'VALIDATION_ERROR' && typeof issue === 'string' ? `${renamed} ${issue}` : body.message;
  return Object.assign(new Error(message), { data: { appError: { ...body, message, details: { ...body.details, field: renamed } } } });
}
