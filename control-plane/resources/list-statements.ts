import { fieldsOf } from '../query/fields.ts';
import { parseQueryFilters, parseWhere, type Filter } from '../query/filters.ts';
import { compileList, type ListStatements } from '../query/list.ts';
import { parseSort } from '../query/sort.ts';
import { RESOURCE_TABLE } from './resource-table.ts';
import { RESOURCE_COLUMNS } from './resources.repo.ts';

export type { ListStatements } from '../query/list.ts';

export interface ListOptions {
  type: string;
  filter: Record<string, string>;
  where?: Record<string, unknown>;
  sort?: string;
  limit: number;
  offset?: number;
  cursor?: string;
}

const DEFAULT_SORT = [{ field: 'createdAt', desc: false }];

/**
 * Compiles a list request of one type (v3 query filters and a structured `where` alike) into the
 * page and count statements. Field kinds come from the object type's schema.
 */
export function buildListStatements(options: ListOptions, schema: object | undefined): ListStatements {
  const filters: Filter[] = [...parseQueryFilters(options.filter), ...(options.where ? parseWhere(options.where) : [])];
  return compileList(fieldsOf(RESOURCE_TABLE, [schema]), RESOURCE_COLUMNS, {
    types: [options.type],
    filters,
    sortKeys: parseSort(options.sort, DEFAULT_SORT),
    limit: options.limit,
    offset: options.offset,
    cursor: options.cursor,
  });
}
