import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '../../api-edge/openapi/document.ts';
import { openApiDocument } from './operations.ts';
import { owaspRuleset, patternBoundsLength } from './owasp-ruleset.ts';

/**
 * Both OpenAPI documents linted with Spectral: its `oas` ruleset (every rule) and the OWASP API
 * Security rules of ./owasp-ruleset.ts. A finding is either fixed in api-edge/openapi (or the
 * schema it is generated from) or accepted below, each acceptance with its reason, as recorded
 * in docs/decisions/0116-openapi-lint.md.
 */
const { Spectral, Document } = spectralCore;
const { Json } = spectralParsers;

/** Names of what a client sends that are free-form by the contract: a resource's data, a filter, a JSON Schema, a workflow's input. */
const FREE_FORM = ['actions', 'data', 'fileProperties', 'file_properties', 'filter', 'from', 'input', 'items', 'limits', 'metadata', 'metrics', 'schema', 'set', 'where'];
/** GeoJSON (RFC 7946) as clients send it: geometries of nested coordinate arrays, free `properties`, a feature id of their own. */
const GEOJSON = ['features', 'geometry', 'geometries', 'coordinates', 'properties'];

interface Acceptance {
  rule: string;
  reason: string;
  /** Only findings whose message names one of these (undefined: every finding of the rule). */
  names?: string[];
  /** Also findings that name nothing, at a path matching this (a request body as a whole). */
  unnamedAt?: RegExp;
  /** Only findings at a path matching this. */
  at?: RegExp;
  /** Only findings whose schema (found in the document at the finding's path) this holds for. */
  where?: (schema: Record<string, unknown> | undefined) => boolean;
}

const ACCEPTED: Acceptance[] = [
  { rule: 'operation-description', reason: 'Every operation has a summary; a description is written where there is more to say than the summary.' },
  { rule: 'oas3-parameter-description', reason: 'Parameters whose name and schema say all (limit, offset, id) carry no description; the others do.' },
  { rule: 'contact-properties', reason: 'A self-hosted installation has no fixed URL or e-mail address of its operators to put in the document.' },
  {
    rule: 'owasp:api3:2023-no-additional-properties',
    reason: "Free-form by the contract (a resource's data, filters, JSON Schemas, workflow input); bounded by the 1 MiB body limit and 100 levels of nesting.",
    names: [...FREE_FORM, ...GEOJSON],
    unnamedAt: /requestBody/,
  },
  { rule: 'owasp:api4:2023-array-limit', reason: 'GeoJSON coordinates and geometry collections (RFC 7946) have no fixed size; the body limit bounds them.', names: ['coordinates', 'geometries'] },
  { rule: 'owasp:api1:2023-no-numeric-ids', reason: "A GeoJSON feature's own `id` may be a number (RFC 7946); it is the client's label, not a platform id.", names: ['id'], at: /properties\/features\/items\/properties\/id\// },
  {
    rule: 'array-items',
    reason: 'A tuple (`prefixItems`, JSON Schema 2020-12, OpenAPI 3.1) that the rule, written for OpenAPI 3.0, does not know.',
    where: (schema) => !!schema && Object.hasOwn(schema, 'prefixItems'),
  },
  {
    rule: 'owasp:api4:2023-string-limit',
    reason:
      'Ids are only looked up, and an unknown id of any form or length is 404 like any other (Resources); filter values and ids in a URL are bounded by the size of the request line, batch ids and action states by the body limit.',
    names: ['id', 'ids', 'objectTypeId', 'executionId', 'filter', 'from', 'bbox'],
    unnamedAt: /batch\/delete/,
  },
  { rule: 'owasp:api4:2023-integer-limit', reason: 'Action states are values compared with stored data, any JSON number; GeoJSON coordinates are checked by the geo service (longitude, latitude ranges).', names: ['from', 'coordinates'] },
  {
    rule: 'owasp:api2:2023-no-credentials-in-url',
    reason:
      "Browsers' EventSource sends no header, so the realtime connection token may come as `?token=` (a bearer header works too): it opens one connection to one tenant's event stream on the negotiated channels, within a minute, and nothing else (a replay is refused), and the access log and traces record the route, never the query string.",
    names: ['token'],
    at: /realtime\/connect/,
  },
  {
    rule: 'owasp:api3:2023-no-additional-properties',
    reason: "A v4 chat's `params` fill the stage prompt's `{{name}}` places, so their names are the workflow's: at most 50, each a string of at most 2000 characters, a number, a boolean or null.",
    names: ['params'],
    at: /\/ai\/chat\//,
  },
  {
    rule: 'owasp:api4:2023-integer-limit',
    reason: "A v4 chat's numeric `params` are put into the prompt as text; the two the platform reads (temperature, max_tokens) are checked against their own ranges.",
    names: ['params'],
    at: /\/ai\/chat\//,
  },
];

/** The schema a finding points at: the node at its path, or the array schema whose missing `items` it names. */
function schemaAt(version: ApiVersion, path: Array<string | number>): Record<string, unknown> | undefined {
  const at = path.at(-1) === 'items' ? path.slice(0, -1) : path;
  return at.reduce((node: any, key) => node?.[key], openApiDocument(version));
}

const accepted = (version: ApiVersion) => (finding: { code: string | number; message: string; path: Array<string | number> }) =>
  ACCEPTED.some(({ rule, names, unnamedAt, at, where }) => {
    if (finding.code !== rule) return false;
    if (at && !at.test(finding.path.join('/'))) return false;
    if (where && !where(schemaAt(version, finding.path))) return false;
    if (!names) return true;
    const named = /"([^"]+)"/.exec(finding.message)?.[1];
    return named ? names.includes(named) : !!unnamedAt?.test(finding.path.join('/'));
  });

const linted = new Map<ApiVersion, ReturnType<InstanceType<typeof Spectral>['run']>>();
function lint(version: ApiVersion) {
  if (!linted.has(version)) {
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as never, 'all']], rules: owaspRuleset.rules } as never);
    linted.set(version, spectral.run(new Document(JSON.stringify(openApiDocument(version)), Json)));
  }
  return linted.get(version)!;
}

describe('the OpenAPI documents under Spectral (oas, every rule) and the OWASP API Security rules', () => {
  it.each(['v3', 'v4'] as const)('%s has no finding that is neither fixed nor accepted', async (version) => {
    const findings = await lint(version);
    const open = findings.filter((f) => !accepted(version)(f)).map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`);
    expect(open).toEqual([]);
    // The OWASP rules ran: each checked something (the accepted findings show they look where they should).
    expect(findings.some((f) => String(f.code).startsWith('owasp:'))).toBe(true);
  });

  it('every acceptance is still needed', async () => {
    const findings = [...(await lint('v3')), ...(await lint('v4'))];
    expect(ACCEPTED.filter(({ rule }) => !findings.some((f) => f.code === rule)).map((a) => a.rule)).toEqual([]);
  });

  it('the OWASP rules find what they are written to find', async () => {
    const spectral = new Spectral();
    spectral.setRuleset({ rules: owaspRuleset.rules });
    const bad = {
      openapi: '3.1.0',
      info: { title: 'bad', version: '1' },
      servers: [{ url: 'http://api.example.test' }],
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' }, key: { type: 'apiKey', in: 'query', name: 'key' } } },
      paths: {
        '/things/{thingId}': {
          get: {
            security: [],
            parameters: [
              { name: 'thingId', in: 'path', required: true, schema: { type: 'integer' } },
              { name: 'access_token', in: 'query', schema: { type: 'string' } },
            ],
            responses: { 200: { description: 'ok' } },
          },
          post: {
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, count: { type: 'integer' } } } } } },
            responses: { 201: { description: 'made' } },
          },
        },
      },
    };
    const codes = new Set((await spectral.run(new Document(JSON.stringify(bad), Json))).map((f) => f.code));
    expect([...codes].sort()).toEqual(
      [
        'owasp:api1:2023-no-numeric-ids',
        'owasp:api2:2023-no-credentials-in-url',
        'owasp:api2:2023-no-http-basic',
        'owasp:api2:2023-security-defined',
        'owasp:api3:2023-no-additional-properties',
        'owasp:api4:2023-array-limit',
        'owasp:api4:2023-integer-limit',
        'owasp:api4:2023-rate-limit',
        'owasp:api4:2023-string-limit',
        'owasp:api8:2023-define-error-responses',
        'owasp:api8:2023-https-servers',
      ].sort(),
    );
    expect(patternBoundsLength('^[a-z][a-z0-9]{0,62}$')).toBe(true);
    expect(patternBoundsLength('^[a-z0-9]+(-[a-z0-9]+)*$')).toBe(false);
    expect(patternBoundsLength('^(?=.{1,253}$)([a-z0-9]+\\.)+[a-z]+$')).toBe(true);
  });
});
