import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { fieldsOf, inferKind, isIsoTimestamp } from './fields.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';
import { compileConditions, compileFilters, parseQueryFilters, parseWhere, type Condition } from './filters.ts';
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
      { field: 'status', op: 'eq', value: 'active', at: 'where.status' },
      { field: 'priority', op: 'in', value: [1, 2], at: 'where.priority' },
      { field: 'budget', op: 'gte', value: 10, at: 'where.budget.gte' },
      { field: 'budget', op: 'lt', value: 100, at: 'where.budget.lt' },
    ]);
  });

  it('rejects an unknown operator naming the field', () => {
    expect(() => parseWhere({ budget: { between: [1, 2] } })).toThrow(/where\.budget/);
  });

  it('reads groups at any level and nested fields by dotted name', () => {
    expect(
      parseWhere({ or: [{ status: 'paid' }, { and: [{ amount: { gte: 100 } }, { not: { 'meta.flag': { exists: true } } }] }], 'metadata.priority': { nin: [1] } }),
    ).toEqual([
      {
        or: [
          [{ field: 'status', op: 'eq', value: 'paid', at: 'where.or.0.status' }],
          [[[{ field: 'amount', op: 'gte', value: 100, at: 'where.or.1.and.0.amount.gte' }], [{ not: [{ field: 'meta.flag', op: 'exists', value: true, at: 'where.or.1.and.1.not.meta.flag.exists' }] }]]],
        ],
      },
      { field: 'metadata.priority', op: 'nin', value: [1], at: 'where.metadata.priority.nin' },
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown operator inside a group', { or: [{ amount: { gte: 1 } }, { amount: { between: [1, 2] } }] }, 'where.or.1.amount'],
    ['an empty group', { or: [] }, 'where.or'],
    ['a group that is not a list', { and: { a: 1 } }, 'where.and'],
    ['a not that is not an object', { not: [1] }, 'where.not'],
    ['exists with a value other than a boolean', { a: { exists: 'yes' } }, 'where.a.exists'],
    ['nin with one value', { a: { nin: 1 } }, 'where.a.nin'],
    ['an object as a comparison value', { a: { gte: { b: 1 } } }, 'where.a.gte'],
    ['an operator mixed with something else', { a: { gte: 1, b: 2 } }, 'where.a'],
    ['a nested object instead of a dotted name', { metadata: { priority: 2 } }, 'where.metadata'],
  ])('rejects %s naming its path', (_label, where, field) => {
    try {
      parseWhere(where);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).details?.field).toBe(field);
    }
  });

  it('limits how deep groups nest and how many conditions a filter holds', () => {
    let deep: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 9; i++) deep = { not: deep };
    expect(() => parseWhere(deep)).toThrow(/more than 8 levels/);
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, i]));
    expect(() => parseWhere(many)).toThrow(/at most 100 conditions/);
  });
});

describe('compileFilters', () => {
  const compileWhere = (where: Record<string, unknown>) => {
    const params = new Params();
    const sql = compileFilters(parseWhere(where), fieldsOf(RESOURCE_TABLE, [PROJECT]), params);
    return { sql, values: params.values };
  };

  it('compiles or, and and not with parameters only', () => {
    const { sql, values } = compileWhere({ or: [{ status: 'paid' }, { budget: { gte: 100 }, name: { startsWith: "O'Br" } }], not: { status: { in: ['void'] } } });
    expect(sql).toEqual([
      `(((data #>> '{status}') = $1::text) or ((case when jsonb_typeof(data #> '{budget}') = 'number' then (data #>> '{budget}')::numeric end) >= $2::text::numeric and starts_with((data #>> '{name}'), $3::text)))`,
      `not coalesce(((data #>> '{status}') = any($4::text[])), false)`,
    ]);
    expect(values).toEqual(['paid', '100', "O'Br", ['void']]);
  });

  it('compiles nin to match rows without the field, and exists to the presence of a value', () => {
    const { sql } = compileWhere({ status: { nin: ['a', 'b'] }, 'metadata.owner': { exists: true }, owner: { exists: false }, createdAt: { exists: true } });
    expect(sql).toEqual([
      `not coalesce((data #>> '{status}') = any($1::text[]), false)`,
      `coalesce(jsonb_typeof(data #> '{metadata,owner}'), 'null') <> 'null'`,
      `not (coalesce(jsonb_typeof(data #> '{owner}'), 'null') <> 'null')`,
      'true',
    ]);
  });

  it('names the path inside where for a value of the wrong kind', () => {
    expect(() => compileWhere({ or: [{ budget: { gte: 'ten' } }] })).toThrow(
      expect.objectContaining({ details: { field: 'where.or.0.budget.gte', issue: 'must be a number' } }),
    );
    expect(() => compileWhere({ budget: { startsWith: '1' } })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'where.budget.startsWith' }) }));
    expect(() => compileWhere({ 'bad name': 1 })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'where.bad name' }) }));
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
