import { z } from 'zod';

/** The largest offset a list takes: PostgreSQL binds it as an `int`. */
export const MAX_OFFSET = 2_147_483_647;

const LIMIT_RANGE = 'must be between 1 and 100';

/**
 * A whole number as a query string writes it, in decimal digits: `1e2`, `0x10`, ` 5` or an empty
 * value are not numbers here (JavaScript's Number() would read them as 100, 16, 5 and 0).
 */
const wholeNumber = (value: unknown) => (typeof value === 'string' ? (/^-?\d+$/.test(value) ? Number(value) : Number.NaN) : value);
const WholeNumber = z.number({ error: 'must be a whole number' }).int('must be a whole number');

/** `limit` of every list: 1 to 100, default 50. */
const Limit = z.preprocess(wholeNumber, WholeNumber.min(1, LIMIT_RANGE).max(100, LIMIT_RANGE));
export const LimitSchema = Limit.default(50);
/** `limit` of a list whose default is not 50 (v4 resources: 20). */
export const limitDefaulting = (defaultLimit: number) => Limit.default(defaultLimit);

/** `offset` of every list: 0 up to MAX_OFFSET (default set by each list). */
export const OffsetSchema = z.preprocess(wholeNumber, WholeNumber.min(0, 'must not be negative').max(MAX_OFFSET, `must be at most ${MAX_OFFSET}`));
