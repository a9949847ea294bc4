import { describe, expect, it } from 'vitest';
import { fieldsOf, resolveField } from '../query/fields.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';
import { indexedPaths } from '../object-types/indexed-fields.ts';
import { indexSpecs } from './indexes.ts';

const TENANT = '00000000-0000-4000-8000-00000000000a';
const OTHER_TENANT = '00000000-0000-4000-8000-00000000000b';

const schema = {
  type: 'object',
  properties: {
    sku: { type: 'string', maxLength: 64, 'x-indexed': true },
    price: { type: 'number', 'x-indexed': true },
    active: { type: ['boolean', 'null'], 'x-indexed': true },
    tags: { type: 'array', items: { type: 'string' }, 'x-indexed': true },
    launchedAt: { type: 'string', format: 'date', 'x-indexed': true },
    notes: { type: 'string', 'x-indexed': true },
    long: { type: 'string', maxLength: 5000, 'x-indexed': true },
    specs: { type: 'object', 'x-indexed': true, properties: { weight: { type: 'integer', 'x-indexed': true }, color: { type: 'string' } } },
    'bad name': { type: 'string', maxLength: 10, 'x-indexed': true },
    untyped: { 'x-indexed': true },
    plain: { type: 'string', maxLength: 10, 'x-indexed': false },
  },
};

describe('indexes from object type metadata', () => {
  it('finds the fields marked x-indexed, nested ones included', () => {
    expect(indexedPaths(schema).map((p) => p.join('.'))).toEqual([
      'sku', 'price', 'active', 'tags', 'launchedAt', 'notes', 'long', 'specs', 'specs.weight', 'bad name', 'untyped',
    ]);
  });

  it('indexes the expressions the query engine generates, partial on the tenant and the type', () => {
    const { specs } = indexSpecs(TENANT, [{ name: 'Gadget', schema }]);
    expect(specs.map((s) => s.field)).toEqual(['sku', 'price', 'active', 'tags', 'launchedAt', 'notes', 'long', 'specs.weight']);
    for (const spec of specs) {
      expect(spec.expression).toBe(resolveField(spec.field, fieldsOf(RESOURCE_TABLE, [schema]), () => 'json', 'sort').expr);
      expect(spec.name).toMatch(/^resources_x_[0-9a-f]{16}$/);
      expect(spec.definition).toContain(`create index concurrently if not exists ${spec.name} on resources `);
      expect(spec.definition).toMatch(new RegExp(` where tenant_id = '${TENANT}'::uuid and type = 'Gadget'$`));
    }
    expect(specs.find((s) => s.field === 'sku')!.definition).toContain(`((data #>> '{sku}'), id)`);
    expect(specs.find((s) => s.field === 'tags')!.definition).toContain(`using gin ((data #> '{tags}'))`);
    expect(specs.find((s) => s.field === 'launchedAt')!.definition).toContain(`(try_timestamptz(data #>> '{launchedAt}'), id)`);
  });

  it('indexes text of any length: by hash (equality) when a value may not fit a btree entry', () => {
    const { specs } = indexSpecs(TENANT, [{ name: 'Gadget', schema }]);
    expect(specs.find((s) => s.field === 'notes')!.definition).toContain(`using hash ((data #>> '{notes}'))`);
    expect(specs.find((s) => s.field === 'long')!.definition).toContain(`using hash ((data #>> '{long}'))`);
    expect(specs.find((s) => s.field === 'notes')!.statistics).toBeDefined();
  });

  it('names an index by tenant, type and expression alone, and quotes the type', () => {
    const first = indexSpecs(TENANT, [{ name: 'Gadget', schema }]).specs;
    const again = indexSpecs(TENANT, [{ name: 'Gadget', schema: { properties: { sku: { type: 'string', maxLength: 10, 'x-indexed': true } } } }]).specs;
    expect(again[0]!.name).toBe(first[0]!.name);
    expect(indexSpecs(TENANT, [{ name: 'Widget', schema }]).specs[0]!.name).not.toBe(first[0]!.name);
    expect(indexSpecs(OTHER_TENANT, [{ name: 'Gadget', schema }]).specs[0]!.name).not.toBe(first[0]!.name);
    const quoted = indexSpecs(TENANT, [{ name: "O'Brien", schema: { properties: { n: { type: 'number', 'x-indexed': true } } } }]).specs[0]!;
    expect(quoted.definition).toMatch(/and type = 'O''Brien'$/);
  });

  it('explains every field it cannot index', () => {
    const { skipped } = indexSpecs(TENANT, [{ name: 'Gadget', schema }]);
    expect(Object.fromEntries(skipped.map((s) => [s.field, s.reason]))).toEqual({
      specs: 'an object cannot be indexed; mark its fields instead',
      'bad name': 'is not a field name that filters and sorts accept',
      untyped: 'declares no indexable type',
    });
  });
});
