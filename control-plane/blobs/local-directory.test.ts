import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlobKey, type BlobStore } from './blob-store.ts';
import { createLocalDirectoryBlobStore } from './local-directory.ts';

describe('local-directory blob store', () => {
  let root: string;
  let store: BlobStore;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-blob-test-'));
    store = createLocalDirectoryBlobStore(join(root, 'blobs'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('writes, reads, lists and deletes objects under key prefixes', async () => {
    await store.put('tenants/a/docs/one.txt', 'first');
    await store.put('tenants/a/two.bin', new Uint8Array([1, 2, 3]));
    await store.put('tenants/b/other.txt', 'other');
    expect(new TextDecoder().decode(await store.get('tenants/a/docs/one.txt'))).toBe('first');
    expect(await store.head('tenants/a/two.bin')).toMatchObject({ key: 'tenants/a/two.bin', size: 3 });
    expect((await store.list('tenants/a/')).map((o) => o.key)).toEqual(['tenants/a/docs/one.txt', 'tenants/a/two.bin']);
    expect((await store.list('tenants/a/t')).map((o) => o.key)).toEqual(['tenants/a/two.bin']);
    expect((await store.list('tenants/')).length).toBe(3);
    expect(await store.delete('tenants/a/two.bin')).toBe(true);
    expect(await store.delete('tenants/a/two.bin')).toBe(false);
    expect(await store.get('tenants/a/two.bin')).toBeUndefined();
    expect(await store.head('tenants/a/docs')).toBeUndefined();
    expect(await store.list('tenants/none/')).toEqual([]);
    expect(store.info()).toEqual({ kind: 'local-directory', location: join(root, 'blobs') });
  });

  it('replaces an object whole and leaves no temporary files', async () => {
    await store.put('tenants/c/file.txt', 'old');
    await store.put('tenants/c/file.txt', 'new');
    expect(new TextDecoder().decode(await store.get('tenants/c/file.txt'))).toBe('new');
    expect(await readdir(join(root, 'blobs', 'tenants', 'c'))).toEqual(['file.txt']);
  });

  it('refuses keys that could leave the store or name nothing', async () => {
    for (const key of ['../escape', 'tenants/../../etc/passwd', '/absolute', 'a//b', 'a/./b', '', 'a/b~c', 'tenants/a/']) {
      expect(() => checkBlobKey(key), key).toThrow(/not a valid blob key/);
      await expect(store.put(key, 'x'), key).rejects.toThrow(/not a valid blob key/);
    }
    expect(checkBlobKey('tenants/a/', { prefix: true })).toBe('tenants/a/');
    await expect(store.list('../')).rejects.toThrow(/not a valid blob prefix/);
  });
});
