import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addErrors from 'ajv-errors';
import addFormats from 'ajv-formats';
import { ValidationError } from '../errors.ts';
import { createLruMap } from '../lru-map.ts';

/** `strictNumbers`: NaN and Infinity (e.g. `1e999` in a body) are not numbers; JSON would store them as null. */
const ajv = new Ajv2020({ allErrors: true, strict: false, strictNumbers: true });
addFormats.default(ajv);
addErrors.default(ajv);

/**
 * How many object-type versions keep a compiled validator: a tenant can make any number of
 * versions, so the least recently used is forgotten (and compiled again when next needed).
 */
export const MAX_COMPILED_VALIDATORS = 2000;

const compiled = createLruMap<ValidateFunction>(MAX_COMPILED_VALIDATORS);

/** How many compiled validators are kept, by this module and inside the validator library (for tests). */
export function compiledValidatorCount(): { kept: number; library: number } {
  return { kept: compiled.size, library: (ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size };
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath.split('/').slice(1).join('.');
  const params = error.params as { missingProperty?: string; additionalProperty?: string; errors?: ErrorObject[] };
  const child = params.missingProperty ?? params.additionalProperty ?? params.errors?.[0]?.params?.missingProperty;
  return [path, child].filter(Boolean).join('.') || '(root)';
}

function issueOf(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a field of this type';
  return error.message ?? 'is invalid';
}

/**
 * Keywords a tenant's schema may not use: `$async` turns a check into a promise, `pattern` and
 * `patternProperties` run the tenant's regular expressions on the shared event loop (a pattern
 * such as `^(a+)+$` takes seconds), and ids, anchors and references to other documents would be
 * shared with other tenants' schemas in the one validator.
 */
const REFUSED_KEYWORDS = ['$async', 'pattern', 'patternProperties', '$id', '$anchor', '$dynamicAnchor', '$dynamicRef'];

function refusedKeyword(schema: unknown, path: string): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const stack: Array<[unknown, string]> = [[schema, path]];
  while (stack.length) {
    const [node, at] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      if (REFUSED_KEYWORDS.includes(key)) return `${at}${key}`;
      if (key === '$ref' && !(typeof value === 'string' && value.startsWith('#'))) return `${at}${key}`;
      stack.push([value, `${at}${key}.`]);
    }
  }
  return undefined;
}

/** Why a tenant's JSON Schema (2020-12) cannot be used, or undefined when it can. */
export function schemaProblem(schema: object): string | undefined {
  const refused = refusedKeyword(schema, '');
  if (refused) return `uses ${refused}, which object types may not use (no $async, pattern, patternProperties, $id, anchors, or $ref outside the schema)`;
  try {
    ajv.compile(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message.slice(0, 300);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** A check of data against a schema that says whether it holds, without naming why. */
export function schemaCheck(schema: object): (data: unknown) => boolean {
  const validate = ajv.compile(schema);
  ajv.removeSchema(schema);
  return (data) => validate(data) === true;
}

/**
 * Validates resource data against its object type's JSON Schema (compiled once per schema
 * version, while among the {@link MAX_COMPILED_VALIDATORS} most recently used). Throws a
 * ValidationError naming the first offending field and the issue.
 */
export function validateAgainstSchema(cacheKey: string, schema: object, data: unknown): void {
  let validate = compiled.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    // The library keeps every schema it compiled, keyed by the object: only the bounded map keeps it here.
    ajv.removeSchema(schema);
    compiled.set(cacheKey, validate);
  }
  // Only `true` is a pass (an `$async` schema's promise is not).
  if (validate(data) === true) return;
  const first = validate.errors?.[0];
  if (!first) throw new ValidationError('invalid resource data');
  const field = fieldOf(first);
  const issue = issueOf(first);
  throw new ValidationError(`${field} ${issue}`, { field, issue });
}
