import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { fieldsOf, inferKind, isIsoTimestamp } from './fields.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';
import { compileConditions, parseQueryFilters, parseWhere, type Condition } from './filters.ts';
import { Params } from './sql-text.ts';

const PROJECT = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    budget: { type: 'number' },
    startDate: { type: 'string', format: 'date' },
    tags: { type: 'array' },
    metadata: { type: 'object' },
  },
};

function compile(conditions: Condition[]) {
  const params = new Params();
  const sql = compileConditions(conditions, fieldsOf(RESOURCE_TABLE, [PROJECT]), params);
  return { sql, values: params.values };
}

describe('parseQueryFilters', () => {
  it('reads plain fields as equality and a trailing operator segment as the operator', () => {
    expect(
      parseQueryFilters({
        status: 'active',
        'budget.gte': '100',
        'metadata.priority': '2',
        'metadata.priority.lt': '5',
        'name.contains': 'apo',
        'status.ne': 'done',
      }),
    ).toEqual([
      { field: 'status', op: 'eq', value: 'active' },
      { field: 'budget', op: 'gte', value: '100' },
      { field: 'metadata.priority', op: 'eq', value: '2' },
      { field: 'metadata.priority', op: 'lt', value: '5' },
      { field: 'name', op: 'contains', value: 'apo' },
      { field: 'status', op: 'ne', value: 'done' },
    ]);
  });

  it('splits .in on commas and trims the values', () => {
    expect(parseQueryFilters({ 'status.in': 'active, completed ,in-progress' })).toEqual([
      { field: 'status', op: 'in', value: ['active', 'completed', 'in-progress'] },
    ]);
  });

  it('leaves a key without a field name to be rejected as a field', () => {
    expect(() => compile(parseQueryFilters({ '.gte': '1' }))).toThrow(ValidationError);
  });
});

describe('parseWhere', () => {
  it('reads values as equality, arrays as in, and objects as operator maps', () => {
    expect(parseWhere({ status: 'active', priority: [1, 2], budget: { gte: 10, lt: 100 } })).toEqual([
      { field: 'status', op: 'eq', value: 'active' },
      { field: 'priority', op: 'in', value: [1, 2] },
      { field: 'budget', op: 'gte', value: 10 },
      { field: 'budget', op: 'lt', value: 100 },
    ]);
  });

  it('rejects an unknown operator naming the field', () => {
    expect(() => parseWhere({ budget: { between: [1, 2] } })).toThrow(/where\.budget/);
  });
});

describe('kinds of literals', () => {
  it('infers numbers, booleans, ISO dates and text', () => {
    expect(inferKind(['10', '-2.5', '1e3'])).toBe('number');
    expect(inferKind([3])).toBe('number');
    expect(inferKind(['true', 'false'])).toBe('boolean');
    expect(inferKind(['2024-02-29', '2024-03-01T12:00:00Z', '2024-03-01T12:00:00.5+05:30'])).toBe('timestamp');
    expect(inferKind(['10', 'ten'])).toBe('text');
    expect(inferKind(['0x10'])).toBe('text');
  });

  it('takes only days that exist as dates', () => {
    for (const ok of ['2024-02-29', '2023-12-31T23:59:59Z', '2024-01-01 08:00', '2024-01-01T10:00:00+05', '2024-01-01T10:00:00-0330']) {
      expect(isIsoTimestamp(ok), ok).toBe(true);
    }
    for (const bad of ['2023-02-29', '2024-02-30', '2024-13-01', '0000-01-01', '2024-01-01T24:00', '2024-01-01T10:00+99:00', '1', 'March 7, 2024']) {
      expect(isIsoTimestamp(bad), bad).toBe(false);
    }
    expect(inferKind(['2024-02-30'])).toBe('text');
  });
});

describe('compileConditions', () => {
  it('binds every value as a parameter and never writes it into the SQL', () => {
    const evil = "x'; drop table resources; --";
    const { sql, values } = compile([
      { field: 'name', op: 'eq', value: evil },
      { field: 'metadata.note', op: 'contains', value: evil },
    ]);
    expect(sql.join(' ')).not.toContain('drop table');
    expect(values).toEqual([evil, evil]);
  });

  it('rejects field names that could leave the JSON path', () => {
    for (const field of ["name'", 'meta data', 'a..b', 'a.{b}']) {
      expect(() => compile([{ field, op: 'eq', value: '1' }]), field).toThrow(ValidationError);
    }
  });

  it('compares declared numbers, declared dates and numeric literals of undeclared fields with typed casts', () => {
    const { sql, values } = compile([
      { field: 'budget', op: 'gte', value: '10' },
      { field: 'startDate', op: 'lt', value: '2024-03-01' },
      { field: 'metadata.priority', op: 'gt', value: '2' },
      { field: 'metadata.department', op: 'eq', value: 'R&D' },
      { field: 'createdAt', op: 'lte', value: '2024-03-01T00:00:00Z' },
    ]);
    expect(sql[0]).toMatch(/^\(case when jsonb_typeof\(data #> '\{budget\}'\) = 'number' .* end\) >= \$1::text::numeric$/);
    expect(sql[1]).toMatch(/^try_timestamptz\(.*\) < \$2::text::timestamptz$/);
    expect(sql[2]).toMatch(/::numeric end\) > \$3::text::numeric$/);
    expect(sql[3]).toBe(`(data #>> '{metadata,department}') = $4::text`);
    expect(sql[4]).toBe('created_at <= $5::text::timestamptz');
    expect(values).toEqual(['10', '2024-03-01', '2', 'R&D', '2024-03-01T00:00:00Z']);
  });

  it('makes .ne match rows without the field and .contains case-insensitive', () => {
    const { sql } = compile([
      { field: 'name', op: 'ne', value: 'x' },
      { field: 'name', op: 'contains', value: 'Apo' },
      { field: 'tags', op: 'contains', value: 'urgent' },
    ]);
    expect(sql[0]).toContain('is distinct from');
    expect(sql[1]).toMatch(/^strpos\(lower\(.*\), lower\(\$2::text\)\) > 0$/);
    expect(sql[2]).toMatch(/@> jsonb_build_array\(\$3::text::jsonb\)$/);
  });

  it.each<[string, Condition]>([
    ['a non-number for a number field', { field: 'budget', op: 'gte', value: 'ten' }],
    ['a hexadecimal number', { field: 'budget', op: 'eq', value: '0x10' }],
    ['an infinite number', { field: 'budget', op: 'lt', value: '1e999' }],
    ['a day that does not exist', { field: 'startDate', op: 'gte', value: '2024-02-30' }],
    ['a date that is not ISO 8601', { field: 'createdAt', op: 'gte', value: '1' }],
    ['a non-UUID id', { field: 'id', op: 'eq', value: 'abc' }],
    ['an ordering operator on a boolean', { field: 'metadata.flag', op: 'gt', value: 'true' }],
    ['an empty .in', { field: 'status', op: 'in', value: [] }],
    ['more than 100 .in values', { field: 'status', op: 'in', value: Array.from({ length: 101 }, (_, i) => `s${i}`) }],
  ])('rejects %s with a ValidationError', (_label, condition) => {
    expect(() => compile([condition])).toThrow(ValidationError);
  });
});
