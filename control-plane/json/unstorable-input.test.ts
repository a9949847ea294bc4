import { describe, expect, it } from 'vitest';
import { NUL_ISSUE, RESERVED_KEY_ISSUE, UNPAIRED_SURROGATE_ISSUE } from '../errors.ts';
import { MAX_NESTING, NESTING_ISSUE, unstorableInput } from './unstorable-input.ts';

describe('unstorableInput', () => {
  it('passes text that PostgreSQL stores as sent, surrogate pairs (emoji) included', () => {
    expect(unstorableInput({ name: 'Grüße \u{1F600}', tags: ['a', '\uD83D\uDE00'], n: 1, nested: { ok: null } })).toBeUndefined();
    expect(unstorableInput('plain')).toBeUndefined();
  });

  it('finds the first NUL or unpaired surrogate, in a value or a key, with its path', () => {
    expect(unstorableInput({ a: { b: ['x', 'y\u0000'] } })).toEqual({ path: ['a', 'b', '1'], issue: NUL_ISSUE });
    expect(unstorableInput({ a: { 'k\u0000': 1 } })).toEqual({ path: ['a', 'k\u0000'], issue: NUL_ISSUE });
    expect(unstorableInput({ high: 'a\uD800' })).toEqual({ path: ['high'], issue: UNPAIRED_SURROGATE_ISSUE });
    expect(unstorableInput({ low: '\uDC00b' })).toEqual({ path: ['low'], issue: UNPAIRED_SURROGATE_ISSUE });
    expect(unstorableInput({ reversed: '\uDE00\uD83D' })).toEqual({ path: ['reversed'], issue: UNPAIRED_SURROGATE_ISSUE });
    expect(unstorableInput({ ['\uD800']: 1 })).toEqual({ path: ['\uD800'], issue: UNPAIRED_SURROGATE_ISSUE });
    expect(unstorableInput('\uD800')).toEqual({ path: [], issue: UNPAIRED_SURROGATE_ISSUE });
  });

  it('refuses a __proto__ key at any depth, as JSON.parse makes it: an own key', () => {
    expect(unstorableInput(JSON.parse('{"metadata":{"ok":1,"__proto__":{"admin":true}}}'))).toEqual({ path: ['metadata', '__proto__'], issue: RESERVED_KEY_ISSUE });
    expect(unstorableInput(JSON.parse('[{"a":[{"__proto__":null}]}]'))).toEqual({ path: ['0', 'a', '0', '__proto__'], issue: RESERVED_KEY_ISSUE });
    // Other names objects inherit are ordinary own keys.
    expect(unstorableInput(JSON.parse('{"constructor":{"prototype":{"x":1}},"toString":"a","proto":1}'))).toBeUndefined();
  });

  it('refuses input nested deeper than MAX_NESTING, however deep, without exhausting the stack', () => {
    const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    // A procedure's input holds the request body one level down: the body may nest MAX_NESTING levels.
    expect(unstorableInput(nested(MAX_NESTING + 1))).toBeUndefined();
    expect(unstorableInput(nested(MAX_NESTING + 2))).toEqual({ path: Array(MAX_NESTING + 1).fill('a'), issue: NESTING_ISSUE });
    expect(unstorableInput(nested(200_000))?.issue).toBe(NESTING_ISSUE);
  });
});
