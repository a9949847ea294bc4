import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOf, formatValue, looksSecret, parseEnv, readEnvFile, updateEnvFile } from './env-file.ts';

describe('.env.local files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-env-file-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads values as dotenv does', () => {
    const text = [
      '# a comment',
      'PLAIN=value # trailing comment',
      'export EXPORTED=yes',
      "SINGLE='a # b'",
      'DOUBLE="line1\\nline2"',
      'MULTI="first',
      'second"',
      'BACKTICK=`it\'s "quoted"`',
      'EMPTY=',
      '  SPACED = x  ',
      'HASH=a#b',
      'TWICE=1',
      'TWICE=2',
      'not an entry',
    ].join('\n');
    const values = Object.fromEntries(entriesOf({ path: '', exists: true, chunks: parseEnv(text) }).map((e) => [e.key, e.value]));
    expect(values).toEqual({
      PLAIN: 'value',
      EXPORTED: 'yes',
      SINGLE: 'a # b',
      DOUBLE: 'line1\nline2',
      MULTI: 'first\nsecond',
      BACKTICK: 'it\'s "quoted"',
      EMPTY: '',
      SPACED: 'x',
      HASH: 'a#b',
      TWICE: '2',
    });
    // Every character is kept: the chunks put back together are the text.
    expect(parseEnv(text).map((c) => c.raw).join('\n')).toBe(text);
  });

  it('writes values so that they read back exactly', () => {
    for (const value of ['plain', '', 'with space', "it's", 'a#b c', 'two\nlines', 'tick`and\'quote\nnl', 'back\\slash']) {
      const [entry] = entriesOf({ path: '', exists: true, chunks: parseEnv(`K=${formatValue(value)}`) });
      expect(entry!.value, JSON.stringify(value)).toBe(value);
    }
  });

  it('tells secrets by their marker, their name or a URL with a password', () => {
    for (const key of ['CLIENT_SECRET', 'DB_PASSWORD', 'GITHUB_TOKEN', 'STRIPE_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'PRIVATE_KEY_PEM', 'GOOGLE_CREDENTIALS']) {
      expect(looksSecret(key, 'x'), key).toBe(true);
    }
    for (const key of ['SVC_VERTICAL_KEY', 'BASE_URL_PUBLIC_API', 'SVC_CLIENT_ID', 'KEYBOARD', 'TOKENIZER_MODEL']) expect(looksSecret(key, 'x'), key).toBe(false);
    expect(looksSecret('DATABASE_URL', 'postgres://app:hunter2@db/app')).toBe(true);
    expect(looksSecret('DATABASE_URL', 'postgres://db/app')).toBe(false);
    const [marked] = entriesOf({ path: '', exists: true, chunks: parseEnv('# svc:secret\nLOOKS_PLAIN=x') });
    expect(marked!.secret).toBe(true);
  });

  it('updates keys where they stand and adds new ones at the end, keeping everything else', async () => {
    const path = join(dir, '.env.local');
    await writeFile(path, '# keep me\nA=1\n\n# section\nB=old # note\nOTHER=untouched\n', { mode: 0o640 });
    const changes = await updateEnvFile(path, [
      { key: 'A', value: '1' },
      { key: 'B', value: 'new value' },
      { key: 'S', value: 's3cret', secret: true },
      { key: 'C', value: 'c' },
    ]);
    expect(changes).toEqual([
      { key: 'A', action: 'unchanged', secret: false },
      { key: 'B', action: 'updated', secret: false },
      { key: 'S', action: 'added', secret: true },
      { key: 'C', action: 'added', secret: false },
    ]);
    expect(await readFile(path, 'utf8')).toBe("# keep me\nA=1\n\n# section\nB='new value'\nOTHER=untouched\n# svc:secret\nS=s3cret\nC=c\n");
    expect((await stat(path)).mode & 0o777).toBe(0o640);

    // A secret made plain loses its marker; one made secret gains it.
    const again = await updateEnvFile(path, [{ key: 'S', value: 's3cret', secret: false }, { key: 'A', value: '1', secret: true }]);
    expect(again).toEqual([
      { key: 'S', action: 'updated', secret: false },
      { key: 'A', action: 'updated', secret: true },
    ]);
    expect(await readFile(path, 'utf8')).toBe("# keep me\n# svc:secret\nA=1\n\n# section\nB='new value'\nOTHER=untouched\nS=s3cret\nC=c\n");
  });

  it('creates a missing file readable by its owner only, and no file for nothing to write', async () => {
    const path = join(dir, 'new.env');
    expect(await updateEnvFile(path, [])).toEqual([]);
    expect((await readEnvFile(path)).exists).toBe(false);
    await updateEnvFile(path, [{ key: 'X', value: '1' }]);
    expect(await readFile(path, 'utf8')).toBe('X=1\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});
