import { ValidationError } from '../errors.ts';
import { CAST, resolveField, type FieldKind, type FieldRef } from './fields.ts';
import type { Params } from './sql-text.ts';
import type { FieldSource } from './table.ts';

export interface SortKey {
  field: string;
  desc: boolean;
}

/** Parses `-priority,createdAt` into keys; a leading `-` sorts descending. */
export function parseSort(sort: string | undefined, fallback: SortKey[]): SortKey[] {
  if (sort === undefined || sort.trim() === '') return fallback;
  const keys = sort.split(',').map((part) => part.trim());
  if (keys.length > 8 || keys.some((k) => k === '' || k === '-')) throw ValidationError.field('sort', 'must list 1 to 8 comma-separated fields');
  return keys.map((k) => (k.startsWith('-') ? { field: k.slice(1), desc: true } : { field: k, desc: false }));
}

export interface CompiledSort {
  /** One resolved expression per key, the unique `id` tiebreaker last. */
  keys: Array<FieldRef & { desc: boolean }>;
  orderBy: string;
  /** Select-list items that expose each key's value as text, for the next cursor. */
  selectKeys: string;
}

/**
 * Resolves sort keys and appends the `id` tiebreaker, so that the order is total and keyset
 * pagination never skips or repeats a row. Nulls sort as the largest value (PostgreSQL's default).
 */
export function compileSort(keys: readonly SortKey[], source: FieldSource): CompiledSort {
  const resolved = keys
    .filter((k) => k.field !== 'id')
    .map((k) => ({ ...resolveField(k.field, source, () => 'json', 'sort'), desc: k.desc }));
  resolved.push({ ...resolveField('id', source, () => 'uuid', 'sort'), desc: keys.find((k) => k.field === 'id')?.desc ?? false });
  return {
    keys: resolved,
    orderBy: resolved.map((k) => `${k.expr} ${k.desc ? 'desc nulls first' : 'asc nulls last'}`).join(', '),
    selectKeys: resolved.map((k, i) => `(${k.expr})::text as k${i}`).join(', '),
  };
}

/**
 * Field kinds whose comparison operators PostgreSQL marks leakproof. Under row-level security only
 * a leakproof comparison is an index condition or is estimated from the column's statistics; a
 * number (`numeric`) or JSON comparison is a filter applied after the policy, at a default estimate.
 */
const RANGE_KINDS: ReadonlySet<FieldKind> = new Set(['text', 'timestamp', 'uuid']);

/**
 * The keyset condition "after the row whose sort values are `after`", correct for mixed
 * directions and for nulls (which sort as the largest value). Where the keys allow it, in a form
 * that PostgreSQL estimates from the leading key's statistics and walks as an index range:
 *
 * - every key in one direction, of a kind in {@link RANGE_KINDS}, and no null taking part (every
 *   value given, and the keys descending, where nulls come first, or never null): the row
 *   comparison `(k0, k1, id) > ($1, $2, $3)` (`<` descending), an index condition;
 * - otherwise the expansion `(k0 after v0) or (k0 = v0 and k1 after v1) or ...`, with a bound on a
 *   leading key of such a kind in front of it where one holds (`k0 <= v0` descending, `k0 >= v0`
 *   ascending when k0 is never null, `k0 is null` after a null ascending), so that the scan starts
 *   at the cursor rather than at the end of the index. A number key gets no bound: it would be
 *   neither an index condition nor estimated, and beside a filter on the same key it would be
 *   taken for a narrow range.
 */
export function compileKeyset(sort: CompiledSort, after: ReadonlyArray<string | null>, params: Params): string {
  const values = sort.keys.map((key, i) => {
    const raw = after[i] ?? null;
    return raw === null ? null : params.bind(raw, CAST[key.kind]);
  });
  const first = sort.keys[0]!;
  const ranged = sort.keys.every((key) => key.desc === first.desc && RANGE_KINDS.has(key.kind));
  const noNulls = values.every((value) => value !== null) && (first.desc || sort.keys.every((key) => key.notNull));
  if (ranged && noNulls) return `(${sort.keys.map((key) => key.expr).join(', ')}) ${first.desc ? '<' : '>'} (${values.join(', ')})`;

  const equal: string[] = [];
  const alternatives: string[] = [];
  sort.keys.forEach((key, i) => {
    const value = values[i]!;
    let isAfter: string | null;
    if (key.desc) isAfter = value === null ? `${key.expr} is not null` : `${key.expr} < ${value}`;
    else isAfter = value === null ? null : `(${key.expr} > ${value} or ${key.expr} is null)`;
    if (isAfter) alternatives.push([...equal, isAfter].join(' and '));
    equal.push(value === null ? `${key.expr} is null` : `${key.expr} = ${value}`);
  });
  if (!alternatives.length) return 'false';
  const expanded = `(${alternatives.map((a) => `(${a})`).join(' or ')})`;
  const lead = RANGE_KINDS.has(first.kind) ? leadingBound(first, values[0]!) : undefined;
  return lead ? `${lead} and ${expanded}` : expanded;
}

/** What every row after `value` has in its leading key, as an index range, when there is such a bound. */
function leadingBound(key: FieldRef & { desc: boolean }, value: string | null): string | undefined {
  if (value === null) return key.desc ? undefined : `${key.expr} is null`;
  if (key.desc) return `${key.expr} <= ${value}`;
  return key.notNull ? `${key.expr} >= ${value}` : undefined;
}
