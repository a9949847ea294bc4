import { describe, expect, it } from 'vitest';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';
import type { FieldKind } from './fields.ts';
import { compileKeyset, compileSort, parseSort } from './sort.ts';
import { Params } from './sql-text.ts';

const KINDS: Record<string, FieldKind> = { name: 'text', budget: 'number', due: 'timestamp' };
const source = { table: RESOURCE_TABLE, kindOf: (path: readonly string[]) => KINDS[path.join('.')] };
const ID = '00000000-0000-4000-8000-000000000001';

/** The keyset condition of `sort` after a row with `after` values, and its bound parameters. */
function keyset(sort: string, after: Array<string | null>) {
  const params = new Params();
  const text = compileKeyset(compileSort(parseSort(sort, []), source), after, params);
  return { text, values: params.values };
}

describe('the keyset condition', () => {
  it('is a row comparison when every key goes one way, compares leakproof, and no null takes part', () => {
    expect(keyset('createdAt', ['2026-01-01T00:00:00Z', ID]).text).toBe('(created_at, id) > ($1::text::timestamptz, $2::text::uuid)');
    expect(keyset('-name,-id', ['Apollo', ID]).text).toMatch(/^\(\(data #>> '\{name\}'\), id\) < \(\$1::text, \$2::text::uuid\)$/);
  });

  it('expands, behind a bound on the leading key, when the directions differ', () => {
    const { text } = keyset('-createdAt', ['2026-01-01T00:00:00Z', ID]);
    expect(text.startsWith('created_at <= $1::text::timestamptz and ((created_at < $1::text::timestamptz) or (created_at = $1::text::timestamptz and (id > $2::text::uuid or id is null)))')).toBe(true);
  });

  it('keeps the rows with missing values that sort after the cursor', () => {
    // Ascending, nulls last: a text key that may be missing has no lower bound; after a null, only nulls.
    expect(keyset('name', ['Apollo', ID]).text).toMatch(/^\(\(\(\(data #>> '\{name\}'\) > \$1::text or \(data #>> '\{name\}'\) is null\)\) or /);
    expect(keyset('name', [null, ID]).text).toMatch(/^\(data #>> '\{name\}'\) is null and /);
    // Descending, nulls first: after a null, every value.
    expect(keyset('-name,-id', [null, ID]).text).toMatch(/^\(\(\(data #>> '\{name\}'\) is not null\) or /);
  });

  it('puts no bound on a number key, which row-level security keeps from being an index condition', () => {
    const { text } = keyset('-budget,createdAt', ['1000', '2026-01-01T00:00:00Z', ID]);
    expect(text).toMatch(/^\(\(\(case when .* < \$1::text::numeric\) or /);
    expect(text).not.toMatch(/<= \$1/);
  });
});
