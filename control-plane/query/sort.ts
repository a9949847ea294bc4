import { ValidationError } from '../errors.ts';
import { CAST, resolveField, type FieldRef } from './fields.ts';
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
 * The keyset condition "after the row whose sort values are `after`", correct for mixed
 * directions and for nulls: (k0 after v0) or (k0 = v0 and k1 after v1) or ...
 */
export function compileKeyset(sort: CompiledSort, after: ReadonlyArray<string | null>, params: Params): string {
  const equal: string[] = [];
  const alternatives: string[] = [];
  sort.keys.forEach((key, i) => {
    const raw = after[i] ?? null;
    const value = raw === null ? null : params.bind(raw, CAST[key.kind]);
    let isAfter: string | null;
    if (key.desc) isAfter = value === null ? `${key.expr} is not null` : `${key.expr} < ${value}`;
    else isAfter = value === null ? null : `(${key.expr} > ${value} or ${key.expr} is null)`;
    if (isAfter) alternatives.push([...equal, isAfter].join(' and '));
    equal.push(value === null ? `${key.expr} is null` : `${key.expr} = ${value}`);
  });
  return alternatives.length ? `(${alternatives.map((a) => `(${a})`).join(' or ')})` : 'false';
}
