import { describe, expect, it } from 'vitest';
import { mergePatch } from './merge-patch.ts';

describe('mergePatch (RFC 7386)', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('the specification’s example: %j patched with %j is %j', (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it('merges nested objects at any depth and keeps untouched siblings', () => {
    const target = { name: 'Vega', metadata: { priority: 2, department: 'R&D', nested: { a: 1, b: 2 } } };
    expect(mergePatch(target, { metadata: { priority: 5, nested: { b: null, c: 3 } } })).toEqual({
      name: 'Vega',
      metadata: { priority: 5, department: 'R&D', nested: { a: 1, c: 3 } },
    });
  });

  it('does not change its inputs', () => {
    const target = { a: { b: 1 } };
    const patch = { a: { c: 2 } };
    mergePatch(target, patch);
    expect(target).toEqual({ a: { b: 1 } });
    expect(patch).toEqual({ a: { c: 2 } });
  });

  it('treats __proto__ as an ordinary key, never as the prototype', () => {
    const result = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__']);
  });
});
