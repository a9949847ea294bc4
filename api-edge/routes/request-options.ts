import { ValidationError } from '../../control-plane/contracts.ts';
import { jsonObjectBody } from './v3/shape.ts';

/** An optional JSON object body: none (or empty) means every default. */
export const optionalObject = (body: unknown) => (body === undefined || body === '' || body === null ? {} : jsonObjectBody(body));

/** A query parameter's one value; a name given twice is a 400 rather than one value silently kept. */
export function queryValue(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw ValidationError.field(name, 'is given more than once');
  return values[0];
}

/**
 * A request's options from its body and its query string alike, so that an option sent in either
 * place is obeyed, never silently dropped; the procedure's strict schema refuses unknown names. A
 * name given in both places, or twice in the query string, is a 400. `flags` are booleans, read
 * from the query string as `true` or `false`. Every name is defined as an own key (`__proto__`
 * included), so the procedure's input check sees it.
 */
export function bodyAndQueryOptions(request: Request, body: unknown, flags: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const options = { ...optionalObject(body) } as Record<string, unknown>;
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
