import { createHash, randomUUID } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { z } from 'zod';
import { tenantBlobPrefix, type BlobStore } from '../blobs/blob-store.ts';
import { splitHead } from '../blobs/stream-head.ts';
import type { Db } from '../db/client.ts';
import { FileTooLargeError, NotFoundError, UnsupportedFileTypeError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { FileProperty, ObjectType } from '../object-types/object-types.schema.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { assertStorageRoom, type StorageUsage } from '../capabilities/storage-usage.ts';
import { UploadMetaSchema } from '../trpc/upload-body.ts';
import { resourceOps, type ResourceSearchIndex } from './resource-ops.ts';
import { FileRefSchema, type Resource } from './resources.schema.ts';

/** The largest file any property takes (as v3 documents: 100 MB). */
export const MAX_FILE_BYTES = 100 * 1024 * 1024;

/** How many leading bytes decide a file's type by its content. */
const SNIFF_BYTES = 4100;

export { FileRefSchema };
export type FileRef = z.infer<typeof FileRefSchema>;

export const FileUploadMetaSchema = UploadMetaSchema.extend(FileRefSchema.shape)
  .extend({
    /** The request's Content-Length, when it declared one: an upload that cannot fit is refused before it is read. */
    declaredBytes: z.number().int().min(0).optional(),
  })
  .strict();
export type FileUploadMeta = z.infer<typeof FileUploadMetaSchema>;

/** What a resource's `data` holds for an uploaded file property. */
export const StoredFileSchema = z.object({
  filename: z.string(),
  size: z.number().int(),
  contentType: z.string(),
  sha256: z.string(),
  uploadedAt: z.string(),
  /** Names the stored object among the property's uploads. */
  fileId: z.string(),
});
export type StoredFile = z.infer<typeof StoredFileSchema>;

/** Types without magic bytes, known by their name. */
const TEXT_TYPES: Record<string, string> = { txt: 'text/plain', csv: 'text/csv', json: 'application/json', md: 'text/markdown', xml: 'application/xml' };

/** The file's type judged by its leading bytes, else (text formats) by its name's extension. */
async function contentTypeOf(head: Uint8Array, filename: string): Promise<string> {
  const detected = await fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  const extension = filename.toLowerCase().split('.').pop() ?? '';
  return TEXT_TYPES[extension] ?? 'application/octet-stream';
}

const accepts = (declared: readonly string[], contentType: string) =>
  declared.some((type) => type === contentType || (type.endsWith('/*') && contentType.startsWith(type.slice(0, -1))));

/** Where a resource's files live: one folder per resource, holding one per property. */
const filesPrefixOf = (tenantId: string, resourceId: string) => `${tenantBlobPrefix(tenantId)}files/${resourceId}/`;
const blobKeyOf = (tenantId: string, resourceId: string, property: string, fileId: string) => `${filesPrefixOf(tenantId, resourceId)}${property}/${fileId}`;

/**
 * Files attached to resources under the properties their object type declares. An upload is
 * streamed to the blob store (never held whole), judged by its content against the declaration,
 * and recorded in the resource's data with a new version; the previous file goes once it is
 * replaced. Row-level security holds throughout: every read and write runs in the actor's tenant.
 */
export function createResourceFilesService(deps: {
  db: Db;
  objectTypes: ObjectTypesService;
  blobs: BlobStore;
  /** Keeps the search projection current when a file property changes (resource-ops.ts). */
  searchIndex?: ResourceSearchIndex;
  /** Refuses a tenant without `data.files`, and gives its plan's largest file. */
  capabilities?: Pick<CapabilitiesService, 'require'>;
  /** The tenant's storage quota, which uploads must fit in. */
  storageUsage?: Pick<StorageUsage, 'allowance' | 'reserve'>;
  log?: (message: string, detail?: unknown) => void;
}) {
  const { db, objectTypes, blobs } = deps;
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[resource files] ${message}`, detail ?? ''));

  /** The type, its declaration of the property and the resource; 404 for an undeclared property or an unknown resource. */
  async function target(actor: Actor, ref: FileRef, writable: boolean): Promise<{ objectType: ObjectType; declared: FileProperty; resource: Resource }> {
    return db.inTenant(actor.tenantId, async (tx) => {
      const objectType = writable ? await objectTypes.requireWritable(tx, ref.type) : await objectTypes.require(tx, ref.type);
      const declared = Object.hasOwn(objectType.fileProperties, ref.property) ? objectType.fileProperties[ref.property] : undefined;
      if (!declared) throw new NotFoundError(`file property "${ref.property}" of ${objectType.key}`);
      const resource = await resourceOps(tx, objectTypes.validate).read(objectType.key, ref.id);
      if (!resource) throw new NotFoundError('resource');
      return { objectType, declared, resource };
    });
  }

  const storedFile = (resource: Resource, property: string) => {
    const parsed = StoredFileSchema.safeParse(resource.data[property]);
    return parsed.success ? parsed.data : undefined;
  };

  /** Writes the file's new value (or none) at the resource's next version; the replaced object is deleted after commit. */
  async function record(actor: Actor, ref: FileRef, file: StoredFile | undefined): Promise<{ resource: Resource; replaced?: StoredFile }> {
    let replaced: StoredFile | undefined;
    const resource = await db.inTenant(actor.tenantId, async (tx) => {
      const objectType = await objectTypes.requireWritable(tx, ref.type);
      return resourceOps(tx, objectTypes.validate, deps.searchIndex).write(objectType, ref.id, {
        by: actor.userId,
        files: 'set',
        change: (current) => {
          replaced = storedFile(current, ref.property);
          const data = { ...current.data };
          if (file) data[ref.property] = file;
          else delete data[ref.property];
          return data;
        },
      });
    });
    return { resource, replaced };
  }

  return {
    /** Removes every file attached to these resources (deleted ones): nothing of theirs stays in the store. Never throws. */
    async removeAllOf(tenantId: string, resourceIds: readonly string[]): Promise<void> {
      for (const id of resourceIds) {
        try {
          for (const object of await blobs.list(filesPrefixOf(tenantId, id.toLowerCase()))) await blobs.delete(object.key);
        } catch (error) {
          log(`removing the files of deleted resource ${id} (tenant ${tenantId}) failed`, error);
        }
      }
    },

    /**
     * Stores the body as the resource's file property: refused by declared size (413, as soon as
     * the limit is passed) or type (415, judged by content before anything is stored).
     */
    async upload(actor: Actor, meta: FileUploadMeta, body: AsyncIterable<Uint8Array>): Promise<Resource> {
      const allowed = await deps.capabilities?.require(actor.tenantId, 'data.files');
      const { declared, resource: stored } = await target(actor, meta, true);
      const limit = Math.min(declared.maxSize, MAX_FILE_BYTES, allowed?.limits.maxFileBytes ?? MAX_FILE_BYTES);
      const storage = await deps.storageUsage?.allowance(actor.tenantId);
      assertStorageRoom(storage, meta.declaredBytes ?? 0);
      // The id as stored, whatever case the path wrote it in: the object's key follows it.
      const ref = { ...meta, id: stored.id };
      const { head, all } = await splitHead(body, SNIFF_BYTES);
      const contentType = await contentTypeOf(head, meta.filename);
      if (!accepts(declared.contentTypes, contentType)) throw new UnsupportedFileTypeError(contentType, declared.contentTypes);
      const fileId = randomUUID();
      const key = blobKeyOf(actor.tenantId, ref.id, ref.property, fileId);
      const hash = createHash('sha256');
      let size = 0;
      const room = storage && (await deps.storageUsage?.reserve(actor.tenantId, storage));
      async function* measured(): AsyncIterable<Uint8Array> {
        for await (const chunk of all) {
          size += chunk.byteLength;
          if (size > limit) throw new FileTooLargeError(limit);
          await room?.cover(size);
          hash.update(chunk);
          yield chunk;
        }
      }
      try {
        await blobs.put(key, measured());
      } finally {
        await room?.release();
      }
      const file: StoredFile = { filename: meta.filename, size, contentType, sha256: hash.digest('hex'), uploadedAt: new Date().toISOString(), fileId };
      try {
        const { resource, replaced } = await record(actor, ref, file);
        if (replaced) await blobs.delete(blobKeyOf(actor.tenantId, ref.id, ref.property, replaced.fileId)).catch(() => false);
        return resource;
      } catch (error) {
        await blobs.delete(key).catch(() => false);
        throw error;
      }
    },

    /** The stored file's description and its bytes as they are read; 404 when the property holds none. */
    async open(actor: Actor, ref: FileRef): Promise<{ file: StoredFile; bytes: AsyncIterable<Uint8Array> }> {
      const { resource } = await target(actor, ref, false);
      const file = storedFile(resource, ref.property);
      const bytes = file && (await blobs.read(blobKeyOf(actor.tenantId, resource.id, ref.property, file.fileId)));
      if (!file || !bytes) throw new NotFoundError(`file "${ref.property}"`);
      return { file, bytes };
    },

    /** Removes the file and its description (a new version); 404 when the property holds none. */
    async remove(actor: Actor, ref: FileRef): Promise<Resource> {
      const { resource: current } = await target(actor, ref, true);
      if (!storedFile(current, ref.property)) throw new NotFoundError(`file "${ref.property}"`);
      const { resource, replaced } = await record(actor, { ...ref, id: current.id }, undefined);
      if (replaced) await blobs.delete(blobKeyOf(actor.tenantId, current.id, ref.property, replaced.fileId)).catch(() => false);
      return resource;
    },
  };
}

export type ResourceFilesService = ReturnType<typeof createResourceFilesService>;
