import { compileConditions, parseQueryFilters, parseWhere, type Condition } from '../query/filters.ts';
import { compileKeyset, compileSort, parseSort, type CompiledSort } from '../query/sort.ts';
import { decodeCursor, queryFingerprint } from '../query/cursor.ts';
import { Params, type SqlText } from '../query/sql-text.ts';
import { RESOURCE_COLUMNS } from './resources.repo.ts';

export interface ListOptions {
  type: string;
  filter: Record<string, string>;
  where?: Record<string, unknown>;
  sort?: string;
  limit: number;
  offset?: number;
  cursor?: string;
}

export interface ListStatements {
  page: SqlText;
  count: SqlText;
  sort: CompiledSort;
  fingerprint: string;
}

const DEFAULT_SORT = [{ field: 'createdAt', desc: false }];

/**
 * Compiles a list request into the page statement (one row more than `limit`, to tell whether
 * more follow) and the count statement. Field kinds come from the object type's schema.
 */
export function buildListStatements(options: ListOptions, schema: object | undefined): ListStatements {
  const conditions: Condition[] = [...parseQueryFilters(options.filter), ...(options.where ? parseWhere(options.where) : [])];
  const sortKeys = parseSort(options.sort, DEFAULT_SORT);
  const fingerprint = queryFingerprint({ type: options.type, conditions, sortKeys });
  const sort = compileSort(sortKeys, schema);

  const params = new Params();
  const where = ['tenant_id = current_tenant_id()', `type = ${params.bind(options.type)}`, ...compileConditions(conditions, schema, params)];
  const count: SqlText = { text: `select count(*)::int as total from resources where ${where.join(' and ')}`, values: [...params.values] };

  if (options.cursor) where.push(compileKeyset(sort, decodeCursor(options.cursor, fingerprint, sort.keys.length), params));
  const limit = params.bind(options.limit + 1, 'int');
  const offset = params.bind(options.offset ?? 0, 'int');
  const page: SqlText = {
    text: `select ${RESOURCE_COLUMNS}, ${sort.selectKeys} from resources where ${where.join(' and ')} order by ${sort.orderBy} limit ${limit} offset ${offset}`,
    values: params.values,
  };
  return { page, count, sort, fingerprint };
}
