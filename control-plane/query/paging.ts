import { z } from 'zod';

/** The largest offset a list takes: PostgreSQL binds it as an `int`. */
export const MAX_OFFSET = 2_147_483_647;

const LIMIT_RANGE = 'must be between 1 and 100';

/** `limit` of every list: 1 to 100, default 50. */
export const LimitSchema = z.coerce.number().int('must be an integer').min(1, LIMIT_RANGE).max(100, LIMIT_RANGE).default(50);

/** `offset` of every list: 0 up to MAX_OFFSET (default set by each list). */
export const OffsetSchema = z.coerce.number().int('must be an integer').min(0, 'must not be negative').max(MAX_OFFSET, `must be at most ${MAX_OFFSET}`);
