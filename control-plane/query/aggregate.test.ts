import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';
import { compileAggregate, exactNumber, parseGroupBy, parseMetrics, type AggregateQuery } from './aggregate.ts';
import { fieldsOf } from './fields.ts';
import { parseWhere } from './filters.ts';

const INVOICE = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    amount: { type: 'number' },
    dueDate: { type: 'string', format: 'date' },
    customer: { type: 'object', properties: { name: { type: 'string' } } },
  },
};

const source = fieldsOf(RESOURCE_TABLE, [INVOICE]);
const TENANT = '00000000-0000-4000-8000-000000000001';

function compile(request: { groupBy: string[]; metrics: unknown; where?: Record<string, unknown>; limit?: number; types?: string[] }) {
  const query: AggregateQuery = {
    tenantId: TENANT,
    types: request.types ?? ['invoice'],
    groupBy: parseGroupBy(request.groupBy),
    metrics: parseMetrics(request.metrics),
    filters: request.where ? parseWhere(request.where) : [],
    limit: request.limit ?? 1000,
  };
  return compileAggregate(source, query);
}

/** The error a call throws, as `{field, issue}`. */
function refusal(fn: () => unknown): { field?: unknown; issue?: unknown } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details ?? {};
  }
  throw new Error('expected a ValidationError');
}

describe('compileAggregate', () => {
  it('groups by a field and computes each metric, every value from the request bound as a parameter', () => {
    const { sql } = compile({
      groupBy: ['status'],
      metrics: { n: { count: '*' }, total: { sum: 'amount' }, mean: { avg: 'amount' }, low: { min: 'amount' }, high: { max: 'dueDate' }, customers: { count_distinct: 'customer.name' } },
      where: { status: { ne: "x'; drop table resources; --" }, amount: { gte: 10 } },
    });
    expect(sql.text).toBe(
      `select nullif(data #> '{status}', 'null'::jsonb) as g0, count(*) as m0, ` +
        `(sum((case when jsonb_typeof(data #> '{amount}') = 'number' then (data #>> '{amount}')::numeric end)))::text as m1, ` +
        `(avg((case when jsonb_typeof(data #> '{amount}') = 'number' then (data #>> '{amount}')::numeric end)))::text as m2, ` +
        `(min((case when jsonb_typeof(data #> '{amount}') = 'number' then (data #>> '{amount}')::numeric end)))::text as m3, ` +
        `to_char(max(try_timestamptz(data #>> '{dueDate}')) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as m4, ` +
        `count(distinct nullif(data #> '{customer,name}', 'null'::jsonb)) as m5 ` +
        `from resources where tenant_id = $1::text::uuid and type = $2::text ` +
        `and (data #>> '{status}') is distinct from $3::text and (case when jsonb_typeof(data #> '{amount}') = 'number' then (data #>> '{amount}')::numeric end) >= $4::text::numeric ` +
        `group by 1 order by 1 asc nulls last limit $5::text::int`,
    );
    expect(sql.values).toEqual([TENANT, 'invoice', "x'; drop table resources; --", '10', '1001']);
  });

  it('buckets the system timestamps and date fields of the data by day, week, month or year, in UTC', () => {
    const { sql } = compile({ groupBy: ['createdAt:month', 'dueDate:week', 'customer.name'], metrics: { n: { count: '*' } }, types: ['invoice', 'bill'] });
    expect(sql.text).toContain(`to_jsonb(to_char(date_trunc('month', created_at, 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) as g0`);
    expect(sql.text).toContain(`to_jsonb(to_char(date_trunc('week', try_timestamptz(data #>> '{dueDate}'), 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) as g1`);
    expect(sql.text).toContain(`nullif(data #> '{customer,name}', 'null'::jsonb) as g2`);
    expect(sql.text).toContain('type = any($2::text[])');
    expect(sql.text).toContain('group by 1, 2, 3 order by 1 asc nulls last, 2 asc nulls last, 3 asc nulls last');
    expect(sql.values).toEqual([TENANT, ['invoice', 'bill'], '1001']);
  });

  it('renders rows under the names the request used: group names as given, metrics by alias', () => {
    const { render } = compile({ groupBy: ['createdAt:month', 'status'], metrics: { n: { count: '*' }, total: { sum: 'amount' }, mean: { avg: 'amount' }, last: { max: 'createdAt' } } });
    expect(render({ g0: '2024-03-01T00:00:00.000Z', g1: 'paid', m0: '3', m1: '0.30', m2: '0.10000000000000000000', m3: '2024-03-09T10:00:00.000Z' })).toEqual({
      'createdAt:month': '2024-03-01T00:00:00.000Z',
      status: 'paid',
      n: 3,
      total: 0.3,
      mean: 0.1,
      last: '2024-03-09T10:00:00.000Z',
    });
    expect(render({ g0: null, g1: null, m0: '0', m1: null, m2: null, m3: null })).toEqual({ 'createdAt:month': null, status: null, n: 0, total: null, mean: null, last: null });
  });

  it.each<[string, Parameters<typeof compile>[0], string, RegExp]>([
    ['an unknown operation', { groupBy: ['status'], metrics: { total: { median: 'amount' } } }, 'metrics.total', /unknown operation "median"/],
    ['two operations under one alias', { groupBy: ['status'], metrics: { total: { sum: 'amount', max: 'amount' } } }, 'metrics.total', /one operation/],
    ['an alias that is not a name', { groupBy: ['status'], metrics: { 'a b': { count: '*' } } }, 'metrics.a b', /not a valid alias/],
    ['an alias starting with a digit', { groupBy: ['status'], metrics: { '1st': { count: '*' } } }, 'metrics.1st', /not a valid alias/],
    ['an alias of 64 characters', { groupBy: ['status'], metrics: { ['a'.repeat(64)]: { count: '*' } } }, `metrics.${'a'.repeat(64)}`, /not a valid alias/],
    ['a field that is not a path', { groupBy: ['status'], metrics: { total: { sum: "amount'; --" } } }, 'metrics.total.sum', /valid field name/],
    ['* outside count', { groupBy: ['status'], metrics: { total: { sum: '*' } } }, 'metrics.total.sum', /count only/],
    ['a sum of dates', { groupBy: ['status'], metrics: { total: { sum: 'dueDate' } } }, 'metrics.total', /does not apply to dates/],
    ['an average of a system timestamp', { groupBy: ['status'], metrics: { mean: { avg: 'createdAt' } } }, 'metrics.mean', /does not apply to dates/],
    ['a sum of text', { groupBy: ['status'], metrics: { total: { sum: 'status' } } }, 'metrics.total', /numbers and dates/],
    ['an alias that a group key has', { groupBy: ['status'], metrics: { status: { count: '*' } } }, 'metrics.status', /groupBy field/],
    ['the alias __proto__', { groupBy: ['status'], metrics: JSON.parse('{"__proto__": {"count": "*"}}') }, 'metrics.__proto__', /reserved by JavaScript/],
    ['the group key __proto__', { groupBy: ['__proto__'], metrics: { n: { count: '*' } } }, 'groupBy.0', /reserved by JavaScript/],
    ['no metrics', { groupBy: ['status'], metrics: {} }, 'metrics', /1 to 20/],
    ['metrics that are not an object', { groupBy: ['status'], metrics: [] }, 'metrics', /must be an object/],
    ['21 metrics', { groupBy: ['status'], metrics: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`m${i}`, { count: '*' }])) }, 'metrics', /1 to 20/],
    ['no group keys', { groupBy: [], metrics: { n: { count: '*' } } }, 'groupBy', /1 to 5/],
    ['6 group keys', { groupBy: ['a', 'b', 'c', 'd', 'e', 'f'], metrics: { n: { count: '*' } } }, 'groupBy', /1 to 5/],
    ['a repeated group key', { groupBy: ['status', 'status'], metrics: { n: { count: '*' } } }, 'groupBy.1', /repeats/],
    ['an unknown bucket', { groupBy: ['createdAt:hour'], metrics: { n: { count: '*' } } }, 'groupBy.0', /unknown date bucket "hour"/],
    ['a bucket of a text field', { groupBy: ['status:month'], metrics: { n: { count: '*' } } }, 'groupBy.0', /not a date field/],
    ['a group key that is not a path', { groupBy: ['a..b'], metrics: { n: { count: '*' } } }, 'groupBy.0', /valid field name/],
    ['a limit over 10000', { groupBy: ['status'], metrics: { n: { count: '*' } }, limit: 10_001 }, 'limit', /between 1 and 10000/],
  ])('refuses %s, naming where', (_label, request, field, issue) => {
    const details = refusal(() => compile(request));
    expect(details.field).toBe(field);
    expect(String(details.issue)).toMatch(issue);
  });
});

describe('exactNumber', () => {
  it('gives a JSON number when that number is the exact decimal', () => {
    expect(exactNumber('0.30')).toBe(0.3);
    expect(exactNumber('-1234.50')).toBe(-1234.5);
    expect(exactNumber('12345678901.23')).toBe(12345678901.23);
    expect(exactNumber('0')).toBe(0);
    expect(exactNumber('0.0000001')).toBe(1e-7);
    expect(exactNumber('100000000000000000000000')).toBe(1e23);
  });

  it('gives the decimal string when a JSON number would lose a digit', () => {
    expect(exactNumber('12345678901234567.89')).toBe('12345678901234567.89');
    expect(exactNumber('9007199254740993')).toBe('9007199254740993');
    expect(exactNumber('0.30000000000000000001')).toBe('0.30000000000000000001');
  });
});
