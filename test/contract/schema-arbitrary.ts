import fc from 'fast-check';
import { deref, type JsonSchema } from './operations.ts';

/**
 * fast-check arbitraries from JSON Schema (draft 2020-12, as the OpenAPI documents hold it):
 * values a schema accepts, and values it refuses. Sizes are raised above fast-check's defaults
 * (strings of at most 10 characters): a string goes up to its `maxLength` (else 200), so that
 * limits are reached and crossed.
 */

/** The longest string or array generated where the schema sets no bound. */
const UNBOUNDED_STRING = 200;
const UNBOUNDED_ITEMS = 4;
/** Deeper than this, objects and arrays are kept to what is required. */
const MAX_DEPTH = 4;

const anyJson = fc.jsonValue({ maxDepth: 2 });
/** Text of every kind: ASCII, any Unicode scalar, and (rarely) lone surrogates. */
const stringUnit = fc.oneof({ weight: 4, arbitrary: fc.constant('grapheme-ascii' as const) }, { weight: 2, arbitrary: fc.constant('grapheme' as const) }, { weight: 1, arbitrary: fc.constant('binary' as const) });

function types(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties || schema.additionalProperties !== undefined || schema.required) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? UNBOUNDED_STRING, 5000));
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    // fast-check cannot generate from lookarounds: generate without them, keep what the whole pattern accepts.
    const generable = new RegExp(schema.pattern.replace(/\(\?<?[=!][^()]*\)/g, ''));
    return fc.stringMatching(generable).filter((s) => s.length >= minLength && s.length <= maxLength && pattern.test(s));
  }
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) }).map((d) => d.toISOString());
  const free = stringUnit.chain((unit) => fc.string({ minLength, maxLength, unit }));
  // The limits themselves, often: most bugs live there.
  const atLimit = fc.string({ minLength: maxLength, maxLength, unit: 'grapheme-ascii' });
  return fc.oneof({ weight: 5, arbitrary: free }, { weight: 1, arbitrary: atLimit });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : undefined);
  const max = schema.maximum ?? (typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : undefined);
  if (integer) {
    const lo = Math.ceil(min ?? -1_000_000);
    const hi = Math.floor(max ?? 1_000_000);
    return fc.oneof(fc.integer({ min: lo, max: hi }), fc.constantFrom(lo, hi));
  }
  return fc.double({ min: min ?? -1e9, max: max ?? 1e9, noNaN: true, noDefaultInfinity: true });
}

/** Values that `schema` (inside `document`, for `$ref`s) accepts. */
export function validArbitrary(document: JsonSchema, schema: JsonSchema | boolean | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true) return anyJson;
  if (schema === false) return fc.constant(undefined);
  const s = deref(document, schema);
  if (Object.hasOwn(s, 'const')) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((branch: JsonSchema) => validArbitrary(document, branch, depth)));
  if (s.allOf) return validArbitrary(document, mergeAll(document, s), depth);
  const kinds = types(s);
  if (!kinds.length) return anyJson;
  return fc.oneof(
    ...kinds.map((kind): fc.Arbitrary<unknown> => {
      switch (kind) {
        case 'string':
          return stringArbitrary(s);
        case 'integer':
          return numberArbitrary(s, true);
        case 'number':
          return numberArbitrary(s, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array': {
          // A tuple: each position's own schema (its length is `minItems`/`maxItems`).
          if (Array.isArray(s.prefixItems)) return fc.tuple(...s.prefixItems.map((item: JsonSchema) => validArbitrary(document, item, depth + 1)));
          const minLength = s.minItems ?? 0;
          const maxLength = depth >= MAX_DEPTH ? minLength : Math.max(minLength, Math.min(s.maxItems ?? UNBOUNDED_ITEMS, UNBOUNDED_ITEMS + minLength));
          return fc.array(validArbitrary(document, s.items, depth + 1), { minLength, maxLength });
        }
        case 'object':
          return objectArbitrary(document, s, depth);
        default:
          return anyJson;
      }
    }),
  );
}

function objectArbitrary(document: JsonSchema, s: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set<string>(s.required ?? []);
  const keys = Object.keys(properties).filter((key) => depth < MAX_DEPTH || required.has(key));
  const known = fc.record(Object.fromEntries(keys.map((key) => [key, validArbitrary(document, properties[key], depth + 1)])), {
    requiredKeys: keys.filter((key) => required.has(key)),
  });
  const extra = s.additionalProperties;
  if (extra === false || depth >= MAX_DEPTH || (extra === undefined && keys.length)) return known;
  const names = s.propertyNames ? stringArbitrary(deref(document, s.propertyNames)) : fc.string({ minLength: 1, maxLength: 20 });
  const more = fc.dictionary(
    names.filter((name) => !Object.hasOwn(properties, name)),
    validArbitrary(document, extra === true || extra === undefined ? undefined : extra, depth + 1),
    { maxKeys: 3 },
  );
  return fc.tuple(known, more).map(([a, b]) => ({ ...b, ...a }));
}

function mergeAll(document: JsonSchema, s: JsonSchema): JsonSchema {
  const parts = (s.allOf as JsonSchema[]).map((part) => deref(document, part));
  const { allOf: _, ...rest } = s;
  return parts.reduce(
    (merged, part) => ({
      ...merged,
      ...part,
      properties: { ...merged.properties, ...part.properties },
      required: [...(merged.required ?? []), ...(part.required ?? [])],
    }),
    rest,
  );
}

/** A value of a JSON type other than the ones `schema` allows. */
function wrongType(s: JsonSchema): fc.Arbitrary<unknown> {
  const kinds = new Set(types(s));
  const candidates: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', fc.string({ maxLength: 20 })],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true })],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.integer(), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.integer(), { maxKeys: 2 })],
  ];
  const allowed = (kind: string) => kinds.has(kind) || (kind === 'number' && kinds.has('integer'));
  const usable = candidates.filter(([kind]) => !allowed(kind) && !(kind === 'number' && kinds.has('number')));
  return usable.length ? fc.oneof(...usable.map(([, arb]) => arb)) : fc.constant(Symbol.for('unrepresentable'));
}

/**
 * Values that `schema` refuses: a wrong type, a bound crossed, a required property missing, an
 * unknown one where none is allowed, or any of these one level down. Callers confirm with a
 * validator (a wide schema can accept what is meant to be wrong) and drop those it accepts.
 */
export function invalidArbitrary(document: JsonSchema, schema: JsonSchema | boolean | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true) return fc.constant(Symbol.for('unrepresentable'));
  if (schema === false) return anyJson;
  const s = deref(document, schema);
  const options: Array<fc.Arbitrary<unknown>> = [wrongType(s)];
  if (Array.isArray(s.enum)) options.push(fc.string({ minLength: 1, maxLength: 30 }).filter((v) => !s.enum.includes(v)));
  if (s.anyOf || s.oneOf || s.allOf) return fc.oneof(...options);
  const kinds = types(s);
  if (kinds.includes('string')) {
    if (typeof s.maxLength === 'number') options.push(fc.string({ minLength: s.maxLength + 1, maxLength: s.maxLength + 50, unit: 'grapheme-ascii' }));
    if (s.minLength > 0) options.push(fc.string({ maxLength: s.minLength - 1 }));
    if (s.pattern) options.push(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((v) => !new RegExp(s.pattern).test(v)));
  }
  if (kinds.includes('integer') || kinds.includes('number')) {
    if (typeof s.maximum === 'number') options.push(fc.integer({ min: 1, max: 1_000_000 }).map((d) => s.maximum + d));
    if (typeof s.minimum === 'number') options.push(fc.integer({ min: 1, max: 1_000_000 }).map((d) => s.minimum - d));
    if (kinds.includes('integer') && !kinds.includes('number')) options.push(fc.double({ min: -1000, max: 1000, noNaN: true }).filter((v) => !Number.isInteger(v)));
  }
  if (kinds.includes('array')) {
    if (typeof s.maxItems === 'number' && s.maxItems < 1000) options.push(fc.array(validArbitrary(document, s.items, MAX_DEPTH), { minLength: s.maxItems + 1, maxLength: s.maxItems + 3 }));
    if (s.items && depth < MAX_DEPTH) options.push(fc.tuple(invalidArbitrary(document, s.items, depth + 1), validArbitrary(document, s, depth)).map(([bad, good]) => [bad, ...(good as unknown[])].slice(0, Math.max(1, s.maxItems ?? 1))));
  }
  if (kinds.includes('object')) {
    const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
    const valid = objectArbitrary(document, s, depth);
    for (const key of s.required ?? []) {
      options.push(valid.map((v) => Object.fromEntries(Object.entries(v).filter(([k]) => k !== key))));
    }
    if (s.additionalProperties === false) {
      options.push(valid.chain((v) => fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !Object.hasOwn(properties, k)).map((k) => ({ ...v, [k]: 1 }))));
    }
    if (depth < MAX_DEPTH) {
      for (const key of Object.keys(properties)) {
        options.push(fc.tuple(valid, invalidArbitrary(document, properties[key], depth + 1)).map(([v, bad]) => ({ ...v, [key]: bad })));
      }
    }
  }
  return fc.oneof(...options);
}

/** Whether a generated value is one that JSON can carry (invalid arbitraries mark the others). */
export const representable = (value: unknown): boolean => value !== Symbol.for('unrepresentable');
