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

/**
 * A request's options from its body and its query string alike, so that an option sent in either
 * place is obeyed, never silently dropped; the procedure's strict schema refuses unknown names. A
 * name given in both places, or twice in the query string, is a 400. `flags` are booleans, read
 * from the query string as `true` or `false`. Every name is defined as an own key (`__proto__`
 * included), so the procedure's input check sees it.
 */
export function bodyAndQueryOptions(request: Request, body: unknown, flags: ReadonlySet<string> = new Set()): UntrustedObject {
  const options = untrusted({ ...optionalObject(body) } as Record<string, unknown>);
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
