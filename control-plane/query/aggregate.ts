import { RESERVED_KEY_ISSUE, ValidationError } from '../errors.ts';
import { isoTimestamp } from '../db/sql-fragments.ts';
import { parseFieldPath, resolveField, type FieldKind } from './fields.ts';
import { compileFilters, type Filter } from './filters.ts';
import { Params, type SqlText } from './sql-text.ts';
import type { FieldSource } from './table.ts';

export const AGGREGATE_OPS = ['count', 'count_distinct', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];

export const DATE_BUCKETS = ['day', 'week', 'month', 'year'] as const;
export type DateBucket = (typeof DATE_BUCKETS)[number];

/** How many group keys and metrics one aggregate takes, and how many groups it may answer. */
export const AGGREGATE_LIMITS = { groupBy: 5, metrics: 20, rows: 10_000 } as const;

/** A metric's alias: a name a client can use as a JSON key and a shell variable alike. */
export const METRIC_ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface GroupKey {
  /** As the request names it, and as each answer row keys it: `status`, `createdAt:month`. */
  name: string;
  field: string;
  bucket?: DateBucket;
}

export interface Metric {
  alias: string;
  op: AggregateOp;
  /** A field path, or `*` (count only). */
  field: string;
}

export interface AggregateQuery {
  /** The tenant whose rows the statement reads. */
  tenantId: string;
  types: readonly string[];
  groupBy: readonly GroupKey[];
  metrics: readonly Metric[];
  filters: readonly Filter[];
  limit: number;
}

/** What a statement row holds: `g0..gn` group values (JSON), `m0..mn` metric values (text or a count). */
export type AggregateRow = Record<string, unknown>;

export interface AggregateStatement {
  /** One row more than `limit`, to tell whether more groups follow. */
  sql: SqlText;
  /** Turns a statement row into an answer row keyed by group names and aliases. */
  render: (row: AggregateRow) => Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Reads `groupBy` entries: field paths (`status`, `customer.name`) and date buckets of a date
 * field (`createdAt:month`, `dueDate:week`). At most AGGREGATE_LIMITS.groupBy, no repeats.
 */
export function parseGroupBy(groupBy: readonly string[]): GroupKey[] {
  if (groupBy.length === 0 || groupBy.length > AGGREGATE_LIMITS.groupBy) {
    throw ValidationError.field('groupBy', `must list 1 to ${AGGREGATE_LIMITS.groupBy} fields`);
  }
  const seen = new Set<string>();
  return groupBy.map((entry, i) => {
    const at = `groupBy.${i}`;
    const name = entry.trim();
    if (seen.has(name)) throw ValidationError.field(at, `repeats "${name}"`);
    seen.add(name);
    if (name === '__proto__') throw ValidationError.field(at, RESERVED_KEY_ISSUE);
    const [field = '', bucket, ...rest] = name.split(':');
    if (rest.length > 0 || field === '') throw ValidationError.field(at, 'must be a field path, or a date field and a bucket such as createdAt:month');
    parseFieldPath(field, at);
    if (bucket === undefined) return { name, field };
    if (!(DATE_BUCKETS as readonly string[]).includes(bucket)) throw ValidationError.field(at, `has an unknown date bucket "${bucket}"; use one of ${DATE_BUCKETS.join(', ')}`);
    return { name, field, bucket: bucket as DateBucket };
  });
}

/**
 * Reads `metrics`: `{"<alias>": {"<op>": "<field>"}}`, one operation per alias, at most
 * AGGREGATE_LIMITS.metrics. Errors name `metrics.<alias>`.
 */
export function parseMetrics(metrics: unknown): Metric[] {
  if (!isPlainObject(metrics)) throw ValidationError.field('metrics', 'must be an object of {"<alias>": {"<op>": "<field>"}}');
  const entries = Object.entries(metrics);
  if (entries.length === 0 || entries.length > AGGREGATE_LIMITS.metrics) throw ValidationError.field('metrics', `must name 1 to ${AGGREGATE_LIMITS.metrics} metrics`);
  return entries.map(([alias, spec]) => {
    const at = `metrics.${alias}`;
    if (alias === '__proto__') throw ValidationError.field(at, RESERVED_KEY_ISSUE);
    if (!METRIC_ALIAS.test(alias)) throw ValidationError.field(at, 'is not a valid alias: letters, digits and _, not starting with a digit, at most 63');
    if (!isPlainObject(spec) || Object.keys(spec).length !== 1) throw ValidationError.field(at, `must name one operation: {"<op>": "<field>"} with op one of ${AGGREGATE_OPS.join(', ')}`);
    const [op, field] = Object.entries(spec)[0]!;
    if (!(AGGREGATE_OPS as readonly string[]).includes(op)) throw ValidationError.field(at, `has an unknown operation "${op}"; use one of ${AGGREGATE_OPS.join(', ')}`);
    if (typeof field !== 'string' || field.trim() === '') throw ValidationError.field(`${at}.${op}`, 'must be a field path');
    if (field === '*') {
      if (op !== 'count') throw ValidationError.field(`${at}.${op}`, `* applies to count only`);
    } else {
      parseFieldPath(field, `${at}.${op}`);
    }
    return { alias, op: op as AggregateOp, field };
  });
}

/** A JSON value of the field (the stored JSON, or a column's value rendered as the API renders it). */
function groupValue(key: GroupKey, source: FieldSource, at: string): string {
  const { table } = source;
  if (key.bucket) {
    const ref = resolveField(key.field, source, () => 'timestamp', at);
    if (ref.kind !== 'timestamp') throw ValidationError.field(at, `${key.field} is not a date field; a ${key.bucket} bucket applies to dates`);
    return `to_jsonb(${isoTimestamp(`date_trunc('${key.bucket}', ${ref.expr}, 'UTC')`)})`;
  }
  if (Object.hasOwn(table.columns, key.field)) {
    const ref = resolveField(key.field, source, () => 'json', at);
    return ref.kind === 'timestamp' ? `to_jsonb(${isoTimestamp(ref.expr)})` : `to_jsonb(${ref.expr})`;
  }
  const path = parseFieldPath(key.field, at);
  // JSON null and a missing field are one group: null.
  return `nullif(${table.dataColumn} #> '{${path.join(',')}}', 'null'::jsonb)`;
}

/** The kind a metric's field takes: its declared one; an undeclared field is read as a number. */
function metricExpr(metric: Metric, source: FieldSource): { expr: string; kind: FieldKind } {
  const at = `metrics.${metric.alias}`;
  if (metric.field === '*') return { expr: 'count(*)', kind: 'number' };
  const { table } = source;
  const column = Object.hasOwn(table.columns, metric.field);
  if (metric.op === 'count' || metric.op === 'count_distinct') {
    const value = column ? resolveField(metric.field, source, () => 'json', at).expr : `nullif(${table.dataColumn} #> '{${parseFieldPath(metric.field, at).join(',')}}', 'null'::jsonb)`;
    return { expr: metric.op === 'count' ? `count(${value})` : `count(distinct ${value})`, kind: 'number' };
  }
  const ref = resolveField(metric.field, source, () => 'number', at);
  if (ref.kind === 'timestamp') {
    if (metric.op === 'sum' || metric.op === 'avg') throw ValidationError.field(at, `${metric.op} does not apply to dates (${metric.field}); use min or max`);
    return { expr: isoTimestamp(`${metric.op}(${ref.expr})`), kind: 'timestamp' };
  }
  if (ref.kind !== 'number') throw ValidationError.field(at, `${metric.op} applies to numbers and dates; ${metric.field} is ${ref.kind}`);
  return { expr: `(${metric.op}(${ref.expr}))::text`, kind: 'number' };
}

/**
 * Compiles an aggregate over a table: one row per group of `groupBy` (nulls a group of their
 * own, groups in ascending order of their keys), each with its metrics, confined to the current
 * tenant, the given types and the filters. Every value from the request is a bound parameter;
 * field paths and aliases are checked names, and aliases never reach SQL (columns are `g0`, `m0`).
 */
export function compileAggregate(source: FieldSource, query: AggregateQuery): AggregateStatement {
  const { table } = source;
  if (query.limit < 1 || query.limit > AGGREGATE_LIMITS.rows) throw ValidationError.field('limit', `must be between 1 and ${AGGREGATE_LIMITS.rows}`);
  const groupNames = new Set(query.groupBy.map((key) => key.name));
  for (const metric of query.metrics) {
    if (groupNames.has(metric.alias)) throw ValidationError.field(`metrics.${metric.alias}`, 'names a groupBy field too; choose another alias');
  }
  const groups = query.groupBy.map((key, i) => `${groupValue(key, source, `groupBy.${i}`)} as g${i}`);
  const metrics = query.metrics.map((metric, i) => ({ metric, ...metricExpr(metric, source), column: `m${i}` }));

  const params = new Params();
  const tenantCondition = `${table.tenantColumn} = ${params.bind(query.tenantId, 'uuid')}`;
  const [onlyType] = query.types;
  const typeCondition =
    query.types.length === 1 && onlyType !== undefined ? `${table.typeColumn} = ${params.bind(onlyType)}` : `${table.typeColumn} = any(${params.bind([...query.types], 'text[]')})`;
  const where = [tenantCondition, typeCondition, ...compileFilters(query.filters, source, params)];
  const positions = query.groupBy.map((_, i) => String(i + 1));
  const limit = params.bind(query.limit + 1, 'int');
  const text =
    `select ${[...groups, ...metrics.map((m) => `${m.expr} as ${m.column}`)].join(', ')} from ${table.name} where ${where.join(' and ')}` +
    ` group by ${positions.join(', ')} order by ${positions.map((p) => `${p} asc nulls last`).join(', ')} limit ${limit}`;

  return {
    sql: { text, values: params.values },
    render(row) {
      const rendered: Record<string, unknown> = {};
      query.groupBy.forEach((key, i) => (rendered[key.name] = row[`g${i}`] ?? null));
      for (const m of metrics) {
        const value = row[m.column];
        if (m.metric.op === 'count' || m.metric.op === 'count_distinct') rendered[m.metric.alias] = Number(value);
        else if (value === null || value === undefined) rendered[m.metric.alias] = null;
        else if (m.kind === 'timestamp') rendered[m.metric.alias] = value;
        else rendered[m.metric.alias] = m.metric.op === 'avg' ? Number(value) : exactNumber(String(value));
      }
      return rendered;
    },
  };
}

/** `{negative, digits, exponent}` with no leading or trailing zero digit: the value is ±0.digits × 10^exponent. */
function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } {
  const match = /^(-)?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`not a decimal number: ${text}`);
  const [, sign, whole = '', fraction = '', exp = '0'] = match;
  const all = whole + fraction;
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  if (digits === '') return { negative: false, digits: '', exponent: 0 };
  return { negative: sign === '-', digits, exponent: whole.length - lead + Number(exp) };
}

/**
 * A decimal result (PostgreSQL `numeric` as text) as a JSON number when the number JSON carries
 * is that very decimal (`0.3`, `1234.56`), else as the decimal string, so that no digit is lost.
 */
export function exactNumber(text: string): number | string {
  const value = Number(text);
  if (!Number.isFinite(value)) return text;
  const exact = decimalParts(text);
  const shown = decimalParts(String(value));
  return exact.negative === shown.negative && exact.digits === shown.digits && exact.exponent === shown.exponent ? value : text;
}
