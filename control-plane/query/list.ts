import { decodeCursor, queryFingerprint } from './cursor.ts';
import { compileFilters, type Filter } from './filters.ts';
import { compileKeyset, compileSort, type CompiledSort, type SortKey } from './sort.ts';
import { Params, type SqlText } from './sql-text.ts';
import type { FieldSource } from './table.ts';

export interface ListQuery {
  /** The tenant whose rows the statements read. */
  tenantId: string;
  /** One type, or several for a query across types. */
  types: readonly string[];
  /** Filters that must all hold. */
  filters: readonly Filter[];
  sortKeys: readonly SortKey[];
  limit: number;
  offset?: number;
  cursor?: string;
}

export interface ListStatements {
  /** One row more than `limit`, to tell whether more follow; each row carries its sort keys as `k0..kn`. */
  page: SqlText;
  /** The exact total of the matching rows. */
  count: SqlText;
  /** The matching rows, one column of nothing each: the total bounded (`limit`) or estimated (`explain`) from it. */
  matching: SqlText;
  /** The types the statements read. */
  types: readonly string[];
  sort: CompiledSort;
  /** What a cursor of this list is bound to. */
  fingerprint: string;
}

/**
 * Compiles a list over a table into its page statement and its count statement, both confined to
 * the tenant and the given types. `select` is the select list of a row.
 */
export function compileList(source: FieldSource, select: string, query: ListQuery): ListStatements {
  const { table } = source;
  const [onlyType] = query.types;
  const single = query.types.length === 1 && onlyType !== undefined;
  // A cursor of one type's list keeps the fingerprint it had before lists could span types.
  const fingerprint = queryFingerprint(
    single ? { type: onlyType, conditions: query.filters, sortKeys: query.sortKeys } : { types: query.types, conditions: query.filters, sortKeys: query.sortKeys },
  );
  const sort = compileSort(query.sortKeys, source);

  const params = new Params();
  const tenantCondition = `${table.tenantColumn} = ${params.bind(query.tenantId, 'uuid')}`;
  const typeCondition = single ? `${table.typeColumn} = ${params.bind(onlyType)}` : `${table.typeColumn} = any(${params.bind([...query.types], 'text[]')})`;
  const where = [tenantCondition, typeCondition, ...compileFilters(query.filters, source, params)];
  const count: SqlText = { text: `select count(*)::int as total from ${table.name} where ${where.join(' and ')}`, values: [...params.values] };
  const matching: SqlText = { text: `select 1 from ${table.name} where ${where.join(' and ')}`, values: [...params.values] };

  if (query.cursor) where.push(compileKeyset(sort, decodeCursor(query.cursor, fingerprint, sort.keys.length), params));
  const limit = params.bind(query.limit + 1, 'int');
  const offset = params.bind(query.offset ?? 0, 'int');
  const page: SqlText = {
    text: `select ${select}, ${sort.selectKeys} from ${table.name} where ${where.join(' and ')} order by ${sort.orderBy} limit ${limit} offset ${offset}`,
    values: params.values,
  };
  return { page, count, matching, types: query.types, sort, fingerprint };
}
