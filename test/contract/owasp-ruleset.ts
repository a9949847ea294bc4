/**
 * The OWASP API Security Top 10 (2023) checks for OpenAPI documents, as a Spectral ruleset of
 * this project's own (the OWASP ruleset package is not one of the project's dependencies): each
 * rule names the OWASP risk it guards against, and walks the document itself, so that a route
 * documented tomorrow is held to it.
 */

type Json = Record<string, any>;
type Path = Array<string | number>;
interface Finding {
  message: string;
  path: Path;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const CREDENTIAL_NAME = /^(.*[-_])?(token|access[-_]?token|refresh[-_]?token|password|passwd|secret|api[-_]?key|apikey|session|auth|authorization|credentials?)$/i;
const ID_NAME = /(^id$|Id$|_id$|^oid$)/;
/** String formats whose values are bounded by the format itself. */
const BOUNDED_FORMATS = new Set(['uuid', 'date-time', 'date', 'time', 'email', 'binary', 'byte', 'uri']);

function deref(document: Json, node: Json | undefined): { node: Json | undefined; path?: Path } {
  let current = node;
  let path: Path | undefined;
  for (let hops = 0; current && typeof current.$ref === 'string' && current.$ref.startsWith('#/') && hops < 20; hops++) {
    path = current.$ref.slice(2).split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    current = path.reduce((n: any, key) => n?.[key], document);
  }
  return { node: current, path };
}

function* operations(document: Json): Generator<{ method: string; template: string; operation: Json; path: Path }> {
  for (const [template, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) if (item[method]) yield { method, template, operation: item[method], path: ['paths', template, method] };
  }
}

/** Every schema a client sends (parameters and request bodies), each reported once where it is written. */
function* requestSchemas(document: Json): Generator<{ schema: Json; path: Path; name?: string }> {
  const seen = new Set<string>();
  function* walk(schema: Json | boolean | undefined, path: Path, name?: string): Generator<{ schema: Json; path: Path; name?: string }> {
    if (!schema || typeof schema !== 'object') return;
    const resolved = deref(document, schema);
    if (!resolved.node) return;
    const at = resolved.path ?? path;
    const key = at.join('/');
    if (seen.has(key)) return;
    seen.add(key);
    const s = resolved.node;
    yield { schema: s, path: at, name };
    for (const [prop, sub] of Object.entries((s.properties ?? {}) as Json)) yield* walk(sub, [...at, 'properties', prop], prop);
    if (s.items) yield* walk(s.items, [...at, 'items'], name);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') yield* walk(s.additionalProperties, [...at, 'additionalProperties'], name);
    for (const combinator of ['anyOf', 'oneOf', 'allOf'] as const) {
      for (const [i, sub] of ((s[combinator] ?? []) as Json[]).entries()) yield* walk(sub, [...at, combinator, i], name);
    }
  }
  for (const { operation, path } of operations(document)) {
    for (const [i, p] of ((operation.parameters ?? []) as Json[]).entries()) {
      const { node: parameter, path: refPath } = deref(document, p);
      if (!parameter) continue;
      const base = refPath ?? [...path, 'parameters', i];
      if (parameter.schema) yield* walk(parameter.schema, [...base, 'schema'], parameter.name);
      for (const [type, media] of Object.entries((parameter.content ?? {}) as Json)) yield* walk(media.schema, [...base, 'content', type, 'schema'], parameter.name);
    }
    const { node: body, path: bodyPath } = deref(document, operation.requestBody);
    for (const [type, media] of Object.entries((body?.content ?? {}) as Json)) yield* walk(media.schema, [...(bodyPath ?? [...path, 'requestBody']), 'content', type, 'schema']);
  }
}

/** Whether a pattern bounds the length by itself: anchored at both ends, with no unbounded repetition. */
export function patternBoundsLength(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return false;
  // A leading lookahead that bounds the whole value (`^(?=.{1,253}$)...`).
  if (/^\^\(\?=\.\{\d+,\d+\}\$\)/.test(pattern)) return true;
  const outsideClasses = pattern.replace(/\\./g, 'x').replace(/\[[^\]]*\]/g, 'x');
  return !/[*+]|\{\d+,\}/.test(outsideClasses);
}

const typesOf = (s: Json): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);
const effectiveSecurity = (document: Json, operation: Json): Json[] => (operation.security ?? document.security ?? []) as Json[];

/** A rule over the whole document: `check` returns its findings. */
const rule = (description: string, severity: 'error' | 'warn', check: (document: Json) => Finding[]) => ({
  description,
  severity,
  given: '$',
  message: '{{error}}',
  then: { function: (document: Json) => check(document) },
});

export const owaspRuleset = {
  rules: {
    'owasp:api2:2023-security-defined': rule('API2: every operation requires authentication with a scheme the document defines.', 'error', (document) => {
      const schemes = (document.components?.securitySchemes ?? {}) as Json;
      const findings: Finding[] = [];
      for (const { operation, path } of operations(document)) {
        const security = effectiveSecurity(document, operation);
        if (!security.length || security.some((requirement) => !Object.keys(requirement).length)) findings.push({ message: 'The operation can be called without authentication.', path });
        for (const requirement of security) for (const name of Object.keys(requirement)) if (!schemes[name]) findings.push({ message: `Security scheme "${name}" is not defined.`, path });
      }
      return findings;
    }),
    'owasp:api2:2023-no-http-basic': rule('API2: no HTTP basic or digest authentication.', 'error', (document) =>
      Object.entries((document.components?.securitySchemes ?? {}) as Json)
        .filter(([, scheme]) => scheme.type === 'http' && /^(basic|digest)$/i.test(scheme.scheme ?? ''))
        .map(([name]) => ({ message: `Security scheme "${name}" sends credentials in the clear.`, path: ['components', 'securitySchemes', name] })),
    ),
    'owasp:api2:2023-no-credentials-in-url': rule('API2: no credentials in the URL (API keys, tokens, passwords as path or query parameters).', 'error', (document) => {
      const findings: Finding[] = [];
      for (const [name, scheme] of Object.entries((document.components?.securitySchemes ?? {}) as Json)) {
        if (scheme.type === 'apiKey' && scheme.in === 'query') findings.push({ message: `Security scheme "${name}" takes its key in the query string.`, path: ['components', 'securitySchemes', name] });
      }
      for (const { operation, path } of operations(document)) {
        for (const [i, p] of ((operation.parameters ?? []) as Json[]).entries()) {
          const { node: parameter } = deref(document, p);
          if (parameter && (parameter.in === 'query' || parameter.in === 'path') && CREDENTIAL_NAME.test(parameter.name)) findings.push({ message: `Parameter "${parameter.name}" carries a credential in the URL.`, path: [...path, 'parameters', i] });
        }
      }
      return findings;
    }),
    'owasp:api2:2023-jwt-best-practices': rule('API2: a JWT bearer scheme says that tokens are handled per RFC 8725.', 'warn', (document) =>
      Object.entries((document.components?.securitySchemes ?? {}) as Json)
        .filter(([, scheme]) => scheme.type === 'http' && /bearer/i.test(scheme.scheme ?? '') && /jwt/i.test(scheme.bearerFormat ?? '') && !/RFC\s?8725/.test(scheme.description ?? ''))
        .map(([name]) => ({ message: `Security scheme "${name}" does not say that tokens are verified per RFC 8725.`, path: ['components', 'securitySchemes', name, 'description'] })),
    ),
    'owasp:api8:2023-define-error-responses': rule('API8: every operation documents 400, 401 (when secured) and 500 with the error body.', 'error', (document) => {
      const findings: Finding[] = [];
      for (const { operation, path } of operations(document)) {
        const wanted = ['400', '500', ...(effectiveSecurity(document, operation).length ? ['401'] : [])];
        for (const status of wanted) if (!operation.responses?.[status]) findings.push({ message: `Response ${status} is not documented.`, path: [...path, 'responses'] });
      }
      return findings;
    }),
    'owasp:api4:2023-rate-limit': rule('API4: every operation documents 429 with Retry-After, and every success carries the rate-limit headers.', 'error', (document) => {
      const findings: Finding[] = [];
      for (const { operation, path } of operations(document)) {
        const limited = deref(document, operation.responses?.['429']).node;
        if (!limited) findings.push({ message: 'Response 429 is not documented.', path: [...path, 'responses'] });
        else if (!Object.keys(limited.headers ?? {}).some((h) => h.toLowerCase() === 'retry-after')) findings.push({ message: 'Response 429 has no Retry-After header.', path: [...path, 'responses', '429'] });
        for (const [status, r] of Object.entries((operation.responses ?? {}) as Json)) {
          const response = deref(document, r).node ?? {};
          const headers = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
          if (/^2/.test(status) && !['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].every((h) => headers.includes(h))) findings.push({ message: `Response ${status} lacks the rate-limit headers.`, path: [...path, 'responses', status] });
        }
      }
      return findings;
    }),
    'owasp:api1:2023-no-numeric-ids': rule('API1: identifiers are not sequential numbers that a caller can guess.', 'error', (document) => {
      const findings: Finding[] = [];
      for (const { operation, path } of operations(document)) {
        for (const [i, p] of ((operation.parameters ?? []) as Json[]).entries()) {
          const { node: parameter } = deref(document, p);
          const schema = deref(document, parameter?.schema).node ?? {};
          if (parameter && ID_NAME.test(parameter.name) && typesOf(schema).some((t) => t === 'integer' || t === 'number')) findings.push({ message: `Parameter "${parameter.name}" is a number.`, path: [...path, 'parameters', i] });
        }
      }
      for (const { schema, path, name } of requestSchemas(document)) {
        if (name && ID_NAME.test(name) && typesOf(schema).some((t) => t === 'integer' || t === 'number')) findings.push({ message: `"${name}" is a number.`, path });
      }
      return findings;
    }),
    'owasp:api8:2023-https-servers': rule('API8: servers are reached over HTTPS (a relative URL takes the scheme the document is served with).', 'error', (document) =>
      ((document.servers ?? []) as Json[]).flatMap((server, i) => {
        const url = String(server.url ?? '');
        if (url.startsWith('/') || url.startsWith('https://') || /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])([:/]|$)/.test(url)) return [];
        return [{ message: `Server "${url}" is not HTTPS.`, path: ['servers', i, 'url'] }];
      }),
    ),
    'owasp:api4:2023-string-limit': rule('API4: every string a client sends has a bounded length (maxLength, an enum, a const, a bounded format or an anchored pattern without unbounded repetition).', 'warn', (document) =>
      [...requestSchemas(document)]
        .filter(
          ({ schema }) =>
            typesOf(schema).includes('string') && schema.maxLength === undefined && !schema.enum && schema.const === undefined && !BOUNDED_FORMATS.has(schema.format) && !(schema.pattern && patternBoundsLength(schema.pattern)),
        )
        .map(({ path, name }) => ({ message: `String${name ? ` "${name}"` : ''} has no maxLength.`, path })),
    ),
    'owasp:api4:2023-array-limit': rule('API4: every array a client sends has maxItems.', 'warn', (document) =>
      [...requestSchemas(document)].filter(({ schema }) => typesOf(schema).includes('array') && schema.maxItems === undefined).map(({ path, name }) => ({ message: `Array${name ? ` "${name}"` : ''} has no maxItems.`, path })),
    ),
    'owasp:api4:2023-integer-limit': rule('API4: every integer a client sends has a minimum and a maximum.', 'warn', (document) =>
      [...requestSchemas(document)]
        .filter(({ schema }) => typesOf(schema).some((t) => t === 'integer' || t === 'number') && (schema.minimum === undefined && schema.exclusiveMinimum === undefined || schema.maximum === undefined && schema.exclusiveMaximum === undefined) && !schema.enum)
        .map(({ path, name }) => ({ message: `Number${name ? ` "${name}"` : ''} is not bounded on both sides.`, path })),
    ),
    'owasp:api3:2023-no-additional-properties': rule('API3: objects a client sends name their properties (additionalProperties false) or bound them (maxProperties).', 'warn', (document) =>
      [...requestSchemas(document)]
        .filter(({ schema }) => typesOf(schema).includes('object') && schema.additionalProperties !== false && schema.maxProperties === undefined)
        .map(({ path, name }) => ({ message: `Object${name ? ` "${name}"` : ''} takes any property.`, path })),
    ),
  },
};
