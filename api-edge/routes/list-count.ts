import { z } from 'zod';
import { CountModeSchema, untrusted } from '../../control-plane/contracts.ts';
import { param } from './params.ts';
import { queryValue } from './request-input.ts';

/** `count` as a query parameter, and `Prefer: count=…` (RFC 7240), as lists document them. */
export const countQuery = {
  count: param(CountModeSchema, {
    required: false,
    description:
      '`estimated` (the default): the total is exact while at most 1000 rows match, and PostgreSQL\'s estimate past that (`totalExact: false`); `exact`: every matching row is counted. `Prefer: count=exact` asks the same',
  }),
};
export const preferHeader = {
  Prefer: param(z.string().max(200), { required: false, description: '`count=exact` or `count=estimated`, as the `count` query parameter; the parameter wins when both are given' }),
};

const PREFERRED_COUNT = /(?:^|[,;\s])count=(exact|estimated)(?=$|[,;\s])/i;

/** The count a list request asks for: its `count` parameter (checked by the procedure), else its `Prefer` header's, else none. */
export function countModeOf(request: Request, query: URLSearchParams) {
  const asked = queryValue(query, 'count') ?? PREFERRED_COUNT.exec(request.headers.get('prefer') ?? '')?.[1]?.toLowerCase();
  return untrusted(asked);
}

/**
 * `Content-Range` of a list page, as PostgREST sends it: the items' positions and the total, or
 * `*` when the total is an estimate (`0-19/*`); `*\/<total>` for an empty page.
 */
export function contentRange(first: number, items: number, total: number, exact: boolean | undefined): string {
  const of = exact === false ? '*' : String(total);
  return items === 0 ? `*/${of}` : `${first}-${first + items - 1}/${of}`;
}

/** `totalExact: false` when a page's total is an estimate; nothing when it is exact (the page keeps its fields). */
export const estimated = (page: { totalExact?: boolean }) => (page.totalExact === false ? { totalExact: false as const } : {});
