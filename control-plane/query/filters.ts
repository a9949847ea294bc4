import { ValidationError } from '../errors.ts';
import { CAST, inferKind, isIsoTimestamp, isNumberLiteral, parseFieldPath, resolveField, storedText, type FieldKind } from './fields.ts';
import type { FieldSource } from './table.ts';
import type { Params } from './sql-text.ts';
import { UUID } from '../ids.ts';

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'exists'] as const;
export type Operator = (typeof OPERATORS)[number];

/** The operator suffixes of v3's `filter[<field>.<op>]`. */
const QUERY_OPERATORS: readonly Operator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains'];

export type Scalar = string | number | boolean | null;

/** One condition of a where clause. */
export interface Condition {
  field: string;
  op: Operator;
  value: Scalar | Scalar[];
  /** Where the condition stands in the request (`where.or.1.amount.gte`), for errors; the field name when absent. */
  at?: string;
}

/** A filter: a condition, an array of filters that must all hold, or a group. */
export type Filter = Condition | Filter[] | { or: Filter[] } | { not: Filter };

/** How deep groups may nest, and how many conditions one filter may hold. */
export const FILTER_LIMITS = { depth: 8, conditions: 100 } as const;

const isOperator = (s: string): s is Operator => (OPERATORS as readonly string[]).includes(s);
const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Parses v3 query filters: `filter[status]=active`, `filter[budget.gte]=100`,
 * `filter[metadata.priority.in]=1,2`. A trailing segment that names an operator is the operator.
 */
export function parseQueryFilters(filters: Record<string, string>): Condition[] {
  return Object.entries(filters).map(([key, raw]) => {
    const dot = key.lastIndexOf('.');
    const suffix = dot > 0 ? key.slice(dot + 1) : '';
    const [field, op] = (QUERY_OPERATORS as readonly string[]).includes(suffix) ? [key.slice(0, dot), suffix as Operator] : [key, 'eq' as const];
    if (!field) throw ValidationError.field(`filter[${key}]`, 'names no field');
    return { field, op, value: op === 'in' ? raw.split(',').map((v) => v.trim()) : raw };
  });
}

/**
 * Parses a structured where filter (v4): fields with a value (equality), a list (`in`) or an
 * operator map (`{"budget": {"gte": 100}}`), nested fields by dotted name (`"metadata.priority"`),
 * and groups `{"or": [...]}`, `{"and": [...]}`, `{"not": {...}}` at any level. An object value is
 * always an operator map, so a misspelt operator is an error rather than a field. Errors name the
 * path inside `where`.
 */
export function parseWhere(where: Record<string, unknown>, at = 'where'): Filter[] {
  let count = 0;
  const condition = (field: string, op: Operator, value: unknown, path: string): Condition => {
    if (++count > FILTER_LIMITS.conditions) throw ValidationError.field(at, `may hold at most ${FILTER_LIMITS.conditions} conditions`);
    const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
    if (op === 'exists') {
      if (typeof value !== 'boolean') throw ValidationError.field(path, 'must be true or false');
    } else if (op === 'in' || op === 'nin') {
      if (!Array.isArray(value) || !value.every(scalar)) throw ValidationError.field(path, 'must be a list of values');
    } else if (!scalar(value)) {
      throw ValidationError.field(path, `operator ${op} takes one value`);
    }
    return { field, op, value: value as Scalar | Scalar[], at: path };
  };

  const group = (items: unknown, path: string, depth: number): Filter[] => {
    if (!Array.isArray(items) || items.length === 0) throw ValidationError.field(path, 'must be a non-empty list of filters');
    return items.map((item, i) => {
      if (!isPlainObject(item)) throw ValidationError.field(`${path}.${i}`, 'must be an object');
      return object(item, `${path}.${i}`, depth + 1);
    });
  };

  const object = (node: Record<string, unknown>, path: string, depth: number): Filter[] => {
    if (depth > FILTER_LIMITS.depth) throw ValidationError.field(path, `must not nest more than ${FILTER_LIMITS.depth} levels`);
    const filters: Filter[] = [];
    for (const [key, spec] of Object.entries(node)) {
      const keyPath = `${path}.${key}`;
      if (key === 'and') filters.push(group(spec, keyPath, depth));
      else if (key === 'or') filters.push({ or: group(spec, keyPath, depth) });
      else if (key === 'not') {
        if (!isPlainObject(spec)) throw ValidationError.field(keyPath, 'must be an object');
        filters.push({ not: object(spec, keyPath, depth + 1) });
      } else if (Array.isArray(spec)) filters.push(condition(key, 'in', spec, keyPath));
      else if (!isPlainObject(spec)) filters.push(condition(key, 'eq', spec, keyPath));
      else {
        const ops = Object.keys(spec);
        if (ops.length === 0) throw ValidationError.field(keyPath, 'names no operator');
        const unknown = ops.find((op) => !isOperator(op));
        if (unknown !== undefined) throw ValidationError.field(keyPath, `unknown operator "${unknown}"; use one of ${OPERATORS.join(', ')}`);
        for (const op of ops as Operator[]) filters.push(condition(key, op, spec[op], `${keyPath}.${op}`));
      }
    }
    return filters;
  };

  return object(where, at, 0);
}

function toParam(value: Scalar, kind: FieldKind, field: string): string | null {
  if (value === null) return null;
  const text = String(value);
  switch (kind) {
    case 'number':
      if (!isNumberLiteral(text.trim())) throw ValidationError.field(field, 'must be a number');
      return text.trim();
    case 'timestamp':
      if (!isIsoTimestamp(text)) throw ValidationError.field(field, 'must be an ISO 8601 date or timestamp');
      return text;
    case 'uuid':
      if (!UUID.test(text)) throw ValidationError.field(field, 'must be a UUID');
      return text;
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw ValidationError.field(field, 'must be true or false');
      return text;
    case 'json':
    case 'array':
      return JSON.stringify(value);
    default:
      return text;
  }
}

const COMPARATORS: Partial<Record<Operator, string>> = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** Compiles one condition to a SQL boolean expression (all parameters bound through `params`). */
export function compileCondition(condition: Condition, source: FieldSource, params: Params): string {
  const { field, op, value } = condition;
  const name = condition.at ?? field;
  const values = Array.isArray(value) ? value : [value];
  if (op === 'exists') {
    if (Object.hasOwn(source.table.columns, field)) return value === true ? 'true' : 'false';
    const path = parseFieldPath(field, name);
    const present = `coalesce(jsonb_typeof(${source.table.dataColumn} #> '{${path.join(',')}}'), 'null') <> 'null'`;
    return value === true ? present : `not (${present})`;
  }
  let inferred = false;
  const textual = op === 'contains' || op === 'startsWith';
  const ref = resolveField(field, source, () => ((inferred = true), textual ? 'text' : inferKind(values.filter((v) => v !== null))), condition.at ?? 'filter');
  const cast = CAST[ref.kind];
  // An undeclared field holds whatever JSON was stored: the string "2024" equals 2024 too.
  const stored = inferred && ref.kind !== 'text' ? storedText(source.table, parseFieldPath(field, name)) : undefined;
  if (op === 'in' || op === 'nin') {
    if (values.length === 0 || values.length > 100) throw ValidationError.field(name, 'needs 1 to 100 values');
    const typed = `${ref.expr} = any(${params.bind(values.map((v) => toParam(v, ref.kind, name)), `${cast}[]`)})`;
    const matches = stored ? `(${typed} or ${stored} = any(${params.bind(values.map(String), 'text[]')}))` : typed;
    // `nin` matches rows without the field, as `ne` does.
    return op === 'in' ? matches : `not coalesce(${matches}, false)`;
  }
  if (Array.isArray(value)) throw ValidationError.field(name, `operator ${op} takes one value`);
  if (op === 'contains') {
    if (ref.kind === 'array') return `${ref.expr} @> jsonb_build_array(${params.bind(JSON.stringify(value), 'jsonb')})`;
    return `strpos(lower(${ref.expr}::text), lower(${params.bind(String(value ?? ''))})) > 0`;
  }
  if (op === 'startsWith') {
    if (ref.kind !== 'text') throw ValidationError.field(name, 'startsWith applies to text fields only');
    if (typeof value !== 'string') throw ValidationError.field(name, 'must be text');
    return `starts_with(${ref.expr}, ${params.bind(value)})`;
  }
  if (value === null) {
    if (op === 'eq') return `${ref.expr} is null`;
    if (op === 'ne') return `${ref.expr} is not null`;
    throw ValidationError.field(name, `operator ${op} cannot compare with null`);
  }
  const comparator = COMPARATORS[op]!;
  if (ref.kind === 'boolean' && op !== 'eq' && op !== 'ne') throw ValidationError.field(name, `operator ${op} does not apply to booleans`);
  const bound = params.bind(toParam(value, ref.kind, name), cast);
  if (stored && op === 'eq') return `(${ref.expr} = ${bound} or ${stored} = ${params.bind(String(value))})`;
  if (stored && op === 'ne') return `(${ref.expr} is distinct from ${bound} and ${stored} is distinct from ${params.bind(String(value))})`;
  return op === 'ne' ? `${ref.expr} is distinct from ${bound}` : `${ref.expr} ${comparator} ${bound}`;
}

/** Compiles conditions that must all hold, one SQL expression each. */
export function compileConditions(conditions: readonly Condition[], source: FieldSource, params: Params): string[] {
  return conditions.map((condition) => compileCondition(condition, source, params));
}

/**
 * Compiles filters that must all hold, one SQL expression each; groups are parenthesised, and
 * `not` holds for rows where its filter does not (a row without the field included).
 */
export function compileFilters(filters: readonly Filter[], source: FieldSource, params: Params): string[] {
  return filters.map((filter) => compileFilter(filter, source, params));
}

function compileFilter(filter: Filter, source: FieldSource, params: Params): string {
  if (Array.isArray(filter)) return filter.length ? `(${compileFilters(filter, source, params).join(' and ')})` : 'true';
  if ('or' in filter) return `(${filter.or.map((f) => compileFilter(f, source, params)).join(' or ')})`;
  if ('not' in filter) return `not coalesce(${compileFilter(filter.not, source, params)}, false)`;
  return compileCondition(filter, source, params);
}
