import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { decodeCursor, encodeCursor, queryFingerprint } from './cursor.ts';

function rejection(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('cursor codec', () => {
  const query = { type: 'project', conditions: [{ field: 'status', op: 'eq', value: 'active' }], sortKeys: [{ field: 'createdAt', desc: false }] };
  const fingerprint = queryFingerprint(query);

  it('round-trips the sort key values, nulls included', () => {
    const keys = ['2024-03-01 12:00:00.123+00', null, '0d0c4a3e-4d1f-4a0e-9d6b-2f1b8c7a5e11'];
    const cursor = encodeCursor(fingerprint, keys);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, fingerprint, 3)).toEqual(keys);
  });

  it('fingerprints the same query identically and any change in type, filter or sort differently', () => {
    expect(queryFingerprint(structuredClone(query))).toBe(fingerprint);
    const changed = [
      { ...query, type: 'task' },
      { ...query, conditions: [{ field: 'status', op: 'eq', value: 'completed' }] },
      { ...query, conditions: [] },
      { ...query, sortKeys: [{ field: 'createdAt', desc: true }] },
      { ...query, sortKeys: [{ field: 'createdAt', desc: false }, { field: 'name', desc: false }] },
    ];
    for (const other of changed) expect(queryFingerprint(other)).not.toBe(fingerprint);
  });

  it('rejects a cursor issued for another query on "cursor"', () => {
    const cursor = encodeCursor(queryFingerprint({ ...query, sortKeys: [] }), ['x', 'y']);
    const error = rejection(() => decodeCursor(cursor, fingerprint, 2));
    expect(error.details).toEqual({ field: 'cursor', issue: 'was issued for a different sort or filter' });
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['base64 of text', Buffer.from('hello').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
    ['a missing fingerprint', Buffer.from(JSON.stringify({ k: ['a'] })).toString('base64url')],
    ['keys that are not strings', Buffer.from(JSON.stringify({ q: 'x', k: [1] })).toString('base64url')],
  ])('rejects %s on "cursor"', (_label, cursor) => {
    expect(rejection(() => decodeCursor(cursor, fingerprint, 1)).details?.field).toBe('cursor');
  });

  it('rejects a cursor with the wrong number of keys', () => {
    const cursor = encodeCursor(fingerprint, ['a', 'b']);
    expect(rejection(() => decodeCursor(cursor, fingerprint, 3)).details?.field).toBe('cursor');
  });
});
