import { createHash, randomUUID } from 'node:crypto';
import { tenantBlobPrefix, type BlobStore } from '../blobs/blob-store.ts';
import { FileTooLargeError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { assertStorageRoom, type StorageUsage } from '../capabilities/storage-usage.ts';
import type { UploadMeta } from '../trpc/upload-body.ts';
import { MAX_UPLOAD_BYTES, type Upload } from './uploads.schema.ts';

export type UploadsService = ReturnType<typeof createUploadsService>;

/** Streamed bodies (documents, file properties) written into a tenant's blob area. */
export function createUploadsService(deps: { blobs: BlobStore; storageUsage?: Pick<StorageUsage, 'allowance' | 'reserve'>; maxBytes?: number }) {
  const maxBytes = deps.maxBytes ?? MAX_UPLOAD_BYTES;
  return {
    /**
     * Writes `body` under a new key in the actor's tenant area as it is read, measuring and hashing
     * it on the way. A body over the limit is refused as soon as the limit is passed (FILE_TOO_LARGE),
     * and nothing of it is left in the store; the rest of the body is not read. So is a body that
     * would pass the tenant's storage quota (413 naming it).
     */
    async put(actor: Actor, meta: UploadMeta, body: AsyncIterable<Uint8Array>): Promise<Upload> {
      const storage = await deps.storageUsage?.allowance(actor.tenantId);
      assertStorageRoom(storage, 0);
      const key = `${tenantBlobPrefix(actor.tenantId)}uploads/${randomUUID()}`;
      const hash = createHash('sha256');
      let size = 0;
      const room = storage && (await deps.storageUsage?.reserve(actor.tenantId, storage));
      async function* measured(): AsyncIterable<Uint8Array> {
        for await (const chunk of body) {
          size += chunk.byteLength;
          if (size > maxBytes) throw new FileTooLargeError(maxBytes);
          await room?.cover(size);
          hash.update(chunk);
          yield chunk;
        }
      }
      try {
        await deps.blobs.put(key, measured());
      } finally {
        await room?.release();
      }
      return { key, size, sha256: hash.digest('hex'), filename: meta.filename, contentType: meta.contentType };
    },
  };
}
