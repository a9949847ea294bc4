import { describe, expect, it } from 'vitest';
import { v3Resource } from './shape.ts';

const record = { id: 'r1', type: 'project', version: 3, createdBy: null, updatedBy: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-02T00:00:00.000Z' };

describe('v3Resource', () => {
  it('renders the data fields flat beside id, type and the timestamps, which win over data fields of those names', () => {
    const shaped = v3Resource({ ...record, data: JSON.parse('{"name":"Apollo","id":"spoofed","metadata":{"priority":2}}') });
    expect(shaped).toEqual({ name: 'Apollo', id: 'r1', metadata: { priority: 2 }, type: 'project', createdAt: record.createdAt, updatedAt: record.updatedAt });
    expect(Object.getPrototypeOf(shaped)).toBe(Object.prototype);
  });

  it('keeps a __proto__ field as a field, never as the prototype', () => {
    const shaped = v3Resource({ ...record, data: JSON.parse('{"__proto__":{"polluted":true},"name":"Apollo"}') });
    expect(Object.getPrototypeOf(shaped)).toBe(Object.prototype);
    expect((shaped as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(shaped))).toEqual(JSON.parse('{"__proto__":{"polluted":true},"name":"Apollo","id":"r1","type":"project","createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-02T00:00:00.000Z"}'));
  });
});
