import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addErrors from 'ajv-errors';
import addFormats from 'ajv-formats';
import { ValidationError } from '../errors.ts';

/** `strictNumbers`: NaN and Infinity (e.g. `1e999` in a body) are not numbers; JSON would store them as null. */
const ajv = new Ajv({ allErrors: true, strict: false, strictNumbers: true });
addFormats.default(ajv);
addErrors.default(ajv);

const compiled = new Map<string, ValidateFunction>();

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
 * Validates resource data against its object type's JSON Schema (compiled once per schema
 * version). Throws a ValidationError naming the first offending field and the issue.
 */
export function validateAgainstSchema(cacheKey: string, schema: object, data: unknown): void {
  let validate = compiled.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(cacheKey, validate);
  }
  if (validate(data)) return;
  const first = validate.errors?.[0];
  if (!first) throw new ValidationError('invalid resource data');
  const field = fieldOf(first);
  const issue = issueOf(first);
  throw new ValidationError(`${field} ${issue}`, { field, issue });
}
