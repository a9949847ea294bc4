/** SQL text shared by the repositories (string fragments for `unsafe` statements). */

/** A timestamp column as the API's ISO 8601 UTC string with milliseconds, e.g. `2026-01-02T03:04:05.678Z`. */
export const isoTimestamp = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The write time of a row. Timestamps are stored at the millisecond precision the API renders, so
 * that a filter on the value a client was shown (`createdAt.lte`, equality) matches that row.
 */
export const NOW_MS = `date_trunc('milliseconds', now())`;
