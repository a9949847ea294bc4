import { ValidationError } from '../errors.ts';
import { CAST, inferKind, isIsoTimestamp, isNumberLiteral, parseFieldPath, resolveField, storedText, type FieldKind } from './fields.ts';
import type { FieldSource } from './table.ts';
import type { Params } from './sql-text.ts';
import { UUID } from '../ids.ts';

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains'] as const;
export type Operator = (typeof OPERATORS)[number];

export type Scalar = string | number | boolean | null;

/** One condition of a where clause; several combine with AND. */
export interface Condition {
  field: string;
  op: Operator;
  value: Scalar | Scalar[];
}

const isOperator = (s: string): s is Operator => (OPERATORS as readonly string[]).includes(s);

/**
 * Parses v3 query filters: `filter[status]=active`, `filter[budget.gte]=100`,
 * `filter[metadata.priority.in]=1,2`. A trailing segment that names an operator is the operator.
 */
export function parseQueryFilters(filters: Record<string, string>): Condition[] {
  return Object.entries(filters).map(([key, raw]) => {
    const dot = key.lastIndexOf('.');
    const suffix = dot > 0 ? key.slice(dot + 1) : '';
    const [field, op] = isOperator(suffix) ? [key.slice(0, dot), suffix] : [key, 'eq' as const];
    if (!field) throw ValidationError.field(`filter[${key}]`, 'names no field');
    return { field, op, value: op === 'in' ? raw.split(',').map((v) => v.trim()) : raw };
  });
}

/**
 * Parses a structured where filter (v4): `{"status": "active", "budget": {"gte": 100},
 * "metadata.priority": {"in": [1, 2]}}`.
 */
export function parseWhere(where: Record<string, unknown>): Condition[] {
  const conditions: Condition[] = [];
  for (const [field, spec] of Object.entries(where)) {
    if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
      for (const [op, value] of Object.entries(spec)) {
        if (!isOperator(op)) throw ValidationError.field(`where.${field}`, `unknown operator "${op}"; use one of ${OPERATORS.join(', ')}`);
        conditions.push({ field, op, value: value as Scalar | Scalar[] });
      }
    } else if (Array.isArray(spec)) {
      conditions.push({ field, op: 'in', value: spec as Scalar[] });
    } else {
      conditions.push({ field, op: 'eq', value: spec as Scalar });
    }
  }
  return conditions;
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

/** Compiles conditions to a SQL boolean expression (all parameters bound through `params`). */
export function compileConditions(conditions: readonly Condition[], source: FieldSource, params: Params): string[] {
  return conditions.map(({ field, op, value }) => {
    const values = Array.isArray(value) ? value : [value];
    let inferred = false;
    const ref = resolveField(
      field,
      source,
      () => ((inferred = true), op === 'contains' ? 'text' : inferKind(values.filter((v) => v !== null))),
      'filter',
    );
    const cast = CAST[ref.kind];
    // An undeclared field holds whatever JSON was stored: the string "2024" equals 2024 too.
    const stored = inferred && ref.kind !== 'text' ? storedText(source.table, parseFieldPath(field, 'filter')) : undefined;
    if (op === 'in') {
      if (values.length === 0 || values.length > 100) throw ValidationError.field(field, 'needs 1 to 100 values');
      const typed = `${ref.expr} = any(${params.bind(values.map((v) => toParam(v, ref.kind, field)), `${cast}[]`)})`;
      return stored ? `(${typed} or ${stored} = any(${params.bind(values.map(String), 'text[]')}))` : typed;
    }
    if (Array.isArray(value)) throw ValidationError.field(field, `operator ${op} takes one value`);
    if (op === 'contains') {
      if (ref.kind === 'array') return `${ref.expr} @> jsonb_build_array(${params.bind(JSON.stringify(value), 'jsonb')})`;
      return `strpos(lower(${ref.expr}::text), lower(${params.bind(String(value ?? ''))})) > 0`;
    }
    if (value === null) {
      if (op === 'eq') return `${ref.expr} is null`;
      if (op === 'ne') return `${ref.expr} is not null`;
      throw ValidationError.field(field, `operator ${op} cannot compare with null`);
    }
    const comparator = COMPARATORS[op]!;
    if (ref.kind === 'boolean' && op !== 'eq' && op !== 'ne') throw ValidationError.field(field, `operator ${op} does not apply to booleans`);
    const bound = params.bind(toParam(value, ref.kind, field), cast);
    if (stored && op === 'eq') return `(${ref.expr} = ${bound} or ${stored} = ${params.bind(String(value))})`;
    if (stored && op === 'ne') return `(${ref.expr} is distinct from ${bound} and ${stored} is distinct from ${params.bind(String(value))})`;
    return op === 'ne' ? `${ref.expr} is distinct from ${bound}` : `${ref.expr} ${comparator} ${bound}`;
  });
}
