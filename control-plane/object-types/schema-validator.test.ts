import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { compiledValidatorCount, MAX_COMPILED_VALIDATORS, validateAgainstSchema } from './schema-validator.ts';

/** A schema of its own per version: `n` is the least `count` that holds. */
const schemaOf = (n: number) => ({ type: 'object', properties: { count: { type: 'integer', minimum: n } }, required: ['count'] });

describe('compiled schema validators', () => {
  it('keeps a bounded number, inside the validator library too, and validates correctly after eviction', { timeout: 180_000 }, () => {
    const versions = MAX_COMPILED_VALIDATORS + 500;
    for (let n = 0; n < versions; n++) validateAgainstSchema(`type-${n}@1`, schemaOf(n), { count: n });
    const count = compiledValidatorCount();
    expect(count.kept).toBeLessThanOrEqual(MAX_COMPILED_VALIDATORS);
    expect(count.library).toBeLessThanOrEqual(MAX_COMPILED_VALIDATORS);

    // The first versions were evicted: compiled again, each still holds its own schema.
    validateAgainstSchema('type-0@1', schemaOf(0), { count: 0 });
    expect(() => validateAgainstSchema('type-1@1', schemaOf(1), { count: 0 })).toThrow(ValidationError);
    expect(() => validateAgainstSchema('type-1@1', schemaOf(1), { count: 0 })).toThrow('count must be >= 1');
    expect(() => validateAgainstSchema(`type-${versions - 1}@1`, schemaOf(versions - 1), {})).toThrow('count is required');
    expect(compiledValidatorCount().kept).toBeLessThanOrEqual(MAX_COMPILED_VALIDATORS);
  });
});
