import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { checkBlobKey, type BlobObject, type BlobStore } from './blob-store.ts';

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT' || (error as NodeJS.ErrnoException)?.code === 'ENOTDIR';

/**
 * A blob store in a local directory: a key's segments are its path below `root`. Writes go to a
 * temporary file beside the target (named with `~`, which no key holds) and are renamed into place.
 */
export function createLocalDirectoryBlobStore(root: string): BlobStore {
  const base = resolve(root);
  const pathOf = (key: string) => join(base, ...checkBlobKey(key).split('/'));

  async function walk(dir: string, keyPrefix: string, into: BlobObject[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.name.includes('~')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, `${keyPrefix}${entry.name}/`, into);
      else if (entry.isFile()) {
        const info = await stat(path).catch(() => undefined);
        if (info) into.push({ key: `${keyPrefix}${entry.name}`, size: info.size, modifiedAt: info.mtime });
      }
    }
  }

  return {
    info: () => ({ kind: 'local-directory', location: base }),

    async put(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}~${randomBytes(6).toString('hex')}`;
      try {
        if (typeof body === 'string' || body instanceof Uint8Array) await writeFile(temporary, body);
        else await pipeline(body, createWriteStream(temporary));
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },

    async get(key) {
      try {
        return new Uint8Array(await readFile(pathOf(key)));
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },

    async read(key) {
      // Opened first, so that a missing object is `undefined` rather than a failing stream.
      const handle = await open(pathOf(key), 'r').catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw error;
      });
      return handle?.createReadStream({ highWaterMark: 256 * 1024 });
    },

    async head(key) {
      try {
        const info = await stat(pathOf(key));
        return info.isFile() ? { key, size: info.size, modifiedAt: info.mtime } : undefined;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },

    async delete(key) {
      try {
        await unlink(pathOf(key));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },

    async list(prefix, limit = 1000) {
      if (prefix !== '') checkBlobKey(prefix, { prefix: true });
      const directory = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/') + 1) : '';
      const found: BlobObject[] = [];
      await walk(join(base, ...directory.split('/').filter(Boolean)), directory, found);
      return found
        .filter((object) => object.key.startsWith(prefix))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .slice(0, limit);
    },
  };
}
