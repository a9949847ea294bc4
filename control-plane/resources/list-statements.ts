import type { Tx } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import { encodeCursor } from '../query/cursor.ts';
import { fieldsOf } from '../query/fields.ts';
import { parseQueryFilters, parseWhere, type Filter } from '../query/filters.ts';
import { compileList, type ListStatements } from '../query/list.ts';
import { parseSort } from '../query/sort.ts';
import { RESOURCE_TABLE } from './resource-table.ts';
import type { CountMode, ListTotals } from './list-totals.ts';
import { RESOURCE_COLUMNS } from './resources.repo.ts';
import type { ResourcePage } from './resources.schema.ts';

export type { ListStatements } from '../query/list.ts';

export interface ListOptions {
  type: string;
  filter: Record<string, string>;
  where?: Record<string, unknown>;
  sort?: string;
  limit: number;
  offset?: number;
  cursor?: string;
  /** How the total is counted (list-totals.ts); `estimated` when absent. */
  count?: CountMode;
}

const DEFAULT_SORT = [{ field: 'createdAt', desc: false }];

/**
 * Compiles a tenant's list request of one type (v3 query filters and a structured `where` alike) into the
 * page and count statements. Field kinds come from the object type's schema.
 */
export function buildListStatements(tenantId: string, options: ListOptions, schema: object | undefined): ListStatements {
  const filters: Filter[] = [...parseQueryFilters(options.filter), ...(options.where ? parseWhere(options.where) : [])];
  return compileList(fieldsOf(RESOURCE_TABLE, [schema]), RESOURCE_COLUMNS, {
    tenantId,
    types: [options.type],
    filters,
    sortKeys: parseSort(options.sort, DEFAULT_SORT),
    limit: options.limit,
    offset: options.offset,
    cursor: options.cursor,
  });
}

/** A PostgreSQL data exception (SQLSTATE class 22): a value that does not cast to its column's kind. */
const isDataException = (error: unknown) => /^22/.test(String((error as { code?: unknown })?.code ?? ''));

/**
 * Reads a list's page and total (exact, or estimated past a bound: list-totals.ts) and shapes the page: at most `limit` resources, whether more
 * follow, and the cursor of the next page. Filter values are checked before binding; only a
 * cursor's key values reach SQL unchecked, so a cast that fails there is a bad cursor.
 */
export async function readListPage(
  tx: Tx,
  totals: ListTotals,
  statements: ListStatements,
  limit: number,
  cursor: string | undefined,
  count?: CountMode,
): Promise<ResourcePage> {
  const { rows, total, exact } = await totals.read(tx, statements, count).catch((error: unknown) => {
    if (cursor && isDataException(error)) throw ValidationError.field('cursor', 'is not a valid cursor');
    throw error;
  });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  const nextCursor = hasMore && last ? encodeCursor(statements.fingerprint, statements.sort.keys.map((_, i) => last[`k${i}`] ?? null)) : null;
  const items = page.map(({ id, type, data, version, createdBy, updatedBy, createdAt, updatedAt }) => ({ id, type, data, version, createdBy, updatedBy, createdAt, updatedAt }));
  return { items, total, totalExact: exact, hasMore, nextCursor };
}
