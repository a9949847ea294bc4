import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOf, envFilePath, formatValue, looksSecret, parseEnv, readEnvFile, readEnvValues, updateEnvFile, writeProjectEnv } from './env-file.ts';
import { findProjectRoot } from './project.service.ts';

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

  it('fills in only what is missing when asked, with a comment above each key it adds and a header for a new file', async () => {
    const path = join(dir, 'init.env');
    const wanted = [
      { key: 'BASE_URL_PUBLIC_API', value: 'http://localhost:8080', comment: "The platform's address" },
      { key: 'SVC_APP_KEY', value: 'shop' },
    ];
    const made = await updateEnvFile(path, wanted, { onlyMissing: true, header: ['Settings of this machine'] });
    expect(made.map((c) => c.action)).toEqual(['added', 'added']);
    expect(await readFile(path, 'utf8')).toBe("# Settings of this machine\n# The platform's address\nBASE_URL_PUBLIC_API=http://localhost:8080\nSVC_APP_KEY=shop\n");
    await writeFile(path, 'BASE_URL_PUBLIC_API=https://mine.example\nSVC_APP_KEY=\n');
    const again = await updateEnvFile(path, wanted, { onlyMissing: true, header: ['not for an existing file'] });
    expect(again.map((c) => c.action)).toEqual(['unchanged', 'updated']);
    expect(await readEnvValues(path)).toEqual({ BASE_URL_PUBLIC_API: 'https://mine.example', SVC_APP_KEY: 'shop' });
    expect(await readEnvValues(join(dir, 'missing.env'))).toBeUndefined();
  });

  it('leaves one entry of a key it sets, where the first stood, with its export prefix and secret marker', async () => {
    const path = join(dir, 'twice.env');
    await writeFile(path, 'export K=1\nA=2\n# svc:secret\nK=3\n');
    expect(await updateEnvFile(path, [{ key: 'K', value: '3' }])).toEqual([{ key: 'K', action: 'updated', secret: false }]);
    expect(await readFile(path, 'utf8')).toBe('export K=3\nA=2\n');
  });

  it('finds the project folder by one rule: the nearest svc.config.ts or svc.project.json, else the nearest package.json', async () => {
    const root = join(dir, 'repo');
    await mkdir(join(root, 'apps', 'shop', 'src'), { recursive: true });
    await mkdir(join(root, 'apps', 'plain', 'lib'), { recursive: true });
    await writeFile(join(root, 'package.json'), '{}');
    await writeFile(join(root, 'apps', 'shop', 'svc.project.json'), '{}');
    await writeFile(join(root, 'apps', 'plain', 'package.json'), '{"name":"plain"}');
    expect(await findProjectRoot(join(root, 'apps', 'shop', 'src'))).toBe(join(root, 'apps', 'shop'));
    expect(await findProjectRoot(join(root, 'apps', 'plain', 'lib'))).toBe(join(root, 'apps', 'plain'));
    // Every command that writes .env.local writes the project's.
    expect(await envFilePath(join(root, 'apps', 'shop', 'src'))).toBe(join(root, 'apps', 'shop', '.env.local'));
    expect(await writeProjectEnv({ SVC_VERTICAL_KEY: 'shop' }, join(root, 'apps', 'shop', 'src'))).toBe(join(root, 'apps', 'shop', '.env.local'));
    expect(await readEnvValues(join(root, 'apps', 'shop', '.env.local'))).toEqual({ SVC_VERTICAL_KEY: 'shop' });
  });
});
