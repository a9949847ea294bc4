import { describe, expect, it } from 'vitest';
import { parseEnv } from 'node:util';
import { setEnvValues } from '../../cli/services/env-file.ts';

/** How the client edits `.env.local`: the variables it sets, and nothing else. */
describe('setEnvValues', () => {
  it('replaces a variable where it stands, keeping comments, blank lines, export and other variables', () => {
    const text = '# settings\nA=1\n\nexport SVC_VERTICAL_KEY=old # note\nB="x y"\n';
    expect(setEnvValues(text, { SVC_VERTICAL_KEY: 'new-app' })).toBe('# settings\nA=1\n\nexport SVC_VERTICAL_KEY=new-app\nB="x y"\n');
  });

  it('appends a variable the file lacks, and makes a file from nothing', () => {
    expect(setEnvValues('A=1', { B: '2' })).toBe('A=1\nB=2\n');
    expect(setEnvValues('', { B: '2' })).toBe('B=2\n');
  });

  it('drops later assignments of a variable it sets, so that one value is left', () => {
    expect(setEnvValues('K=1\nA=2\nK=3\n', { K: '4' })).toBe('K=4\nA=2\n');
  });

  it('keeps multi-line values of other variables whole, and replaces one of its own', () => {
    const text = 'CERT="-----BEGIN\nK=not-a-variable\n-----END"\nK=1\nOLD="line one\nline two"\nZ=9\n';
    const out = setEnvValues(text, { K: '2', OLD: 'single' });
    expect(out).toBe('CERT="-----BEGIN\nK=not-a-variable\n-----END"\nK=2\nOLD=single\nZ=9\n');
    expect(parseEnv(out)).toEqual({ CERT: '-----BEGIN\nK=not-a-variable\n-----END', K: '2', OLD: 'single', Z: '9' });
  });

  it('quotes what dotenv would misread, so that it reads back the same', () => {
    const values = { S: 'has space', H: 'a#b', Q: 'say "hi"', A: `it's "both"`, N: 'one\ntwo', L: ' lead', E: '' };
    expect(parseEnv(setEnvValues('', values))).toEqual(values);
  });

  it('refuses a value no dotenv quoting can carry, writing nothing', () => {
    expect(() => setEnvValues('A=1\n', { X: `'"\n` })).toThrow(/X cannot be written to \.env\.local/);
  });
});
