import { ValidationError } from '../errors.ts';
import type { FieldSource, KindOf, QueryTable } from './table.ts';

/** How a field's values compare: each kind has its own SQL expression and cast. */
export type FieldKind = 'text' | 'number' | 'boolean' | 'timestamp' | 'uuid' | 'json' | 'array';

export interface FieldRef {
  /** The name the client used, e.g. `metadata.priority`. */
  name: string;
  /** SQL expression of the field for this kind. */
  expr: string;
  kind: FieldKind;
  /** Never null: a server-owned column. A field in the JSON data may be missing. */
  notNull?: boolean;
}

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

type JsonSchema = { type?: string | string[]; format?: string; properties?: Record<string, JsonSchema> };

/** The kind a JSON Schema declares for a path, or undefined when the schema says nothing about it. */
export function declaredKind(schema: JsonSchema | undefined, path: readonly string[]): FieldKind | undefined {
  let node = schema;
  for (const segment of path) {
    node = node?.properties?.[segment];
    if (!node) return undefined;
  }
  const type = Array.isArray(node?.type) ? node.type.find((t) => t !== 'null') : node?.type;
  switch (type) {
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'array';
    case 'object':
      return 'json';
    case 'string':
      return node?.format === 'date' || node?.format === 'date-time' ? 'timestamp' : 'text';
    default:
      return undefined;
  }
}

/**
 * Field kinds as the schemas of every type a statement covers declare them: a path has a kind
 * only when each schema that declares it agrees; where they disagree, the literal decides.
 */
export function schemaKinds(schemas: ReadonlyArray<object | undefined>): KindOf {
  return (path) => {
    const kinds = new Set(schemas.map((schema) => declaredKind(schema as JsonSchema | undefined, path)).filter((kind) => kind !== undefined));
    return kinds.size === 1 ? [...kinds][0] : undefined;
  };
}

/** A table's fields with kinds from the given types' schemas. */
export const fieldsOf = (table: QueryTable, schemas: ReadonlyArray<object | undefined>): FieldSource => ({ table, kindOf: schemaKinds(schemas) });

/** The SQL expression of a data field's stored JSON value as text: `(data #>> '{a,b}')`. */
export const storedText = (table: QueryTable, path: readonly string[]) => `(${table.dataColumn} #>> '{${path.join(',')}}')`;

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})([T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-](0\d|1[0-5])(:?[0-5]\d)?)?)?$/;

/** A decimal number literal that PostgreSQL's `numeric` accepts as it stands (no hex, no `Infinity`). */
export function isNumberLiteral(text: string): boolean {
  return NUMBER.test(text) && Number.isFinite(Number(text));
}

/** An ISO 8601 date or timestamp of a day that exists: `2024-02-29`, `2024-03-01T12:00:00Z`, not `2024-02-30`. */
export function isIsoTimestamp(text: string): boolean {
  const match = ISO_DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return year >= 1 && days !== undefined && day >= 1 && day <= days;
}

/** The kind that a literal suggests, for fields the type's schema does not declare. */
export function inferKind(values: readonly unknown[]): FieldKind {
  const strings = values.map((v) => String(v));
  if (values.every((v) => typeof v === 'number') || strings.every((s) => NUMBER.test(s))) return 'number';
  if (strings.every((s) => s === 'true' || s === 'false')) return 'boolean';
  if (strings.every(isIsoTimestamp)) return 'timestamp';
  return 'text';
}

export function parseFieldPath(name: string, param: string): string[] {
  const path = name.split('.');
  if (!path.every((segment) => SEGMENT.test(segment))) {
    throw new ValidationError(`invalid field name in ${param}`, { field: param, issue: `"${name}" is not a valid field name` });
  }
  return path;
}

/**
 * Resolves a client field name to its SQL expression. Data fields take their kind from the
 * schemas of the types queried; undeclared ones take `fallback` (inferred from the literal, or
 * `json` for sorting, which orders numbers as numbers and strings as strings).
 */
export function resolveField(name: string, source: FieldSource, fallback: () => FieldKind, param: string): FieldRef {
  const { table } = source;
  // Own keys only: `constructor` or `toString` is a data field, not something every object inherits.
  const column = Object.hasOwn(table.columns, name) ? table.columns[name] : undefined;
  if (column) return { name, expr: column.column, kind: column.kind, notNull: true };
  const path = parseFieldPath(name, param);
  const kind = source.kindOf(path) ?? fallback();
  const pathLiteral = `'{${path.join(',')}}'`;
  const json = `${table.dataColumn} #> ${pathLiteral}`;
  switch (kind) {
    case 'text':
      return { name, expr: storedText(table, path), kind };
    case 'number':
      return { name, expr: `(case when jsonb_typeof(${json}) = 'number' then ${storedText(table, path)}::numeric end)`, kind };
    case 'timestamp':
      return { name, expr: `try_timestamptz(${table.dataColumn} #>> ${pathLiteral})`, kind };
    default:
      return { name, expr: `(${json})`, kind };
  }
}

/** The SQL cast that turns a text parameter into a value comparable with a field of this kind. */
export const CAST: Record<FieldKind, string> = {
  text: 'text',
  number: 'numeric',
  boolean: 'jsonb',
  timestamp: 'timestamptz',
  uuid: 'uuid',
  json: 'jsonb',
  array: 'jsonb',
};
