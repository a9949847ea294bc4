import { createHash, randomUUID } from 'node:crypto';
import type { BlobObject } from '../blobs/blob-store.ts';
import { splitHead } from '../blobs/stream-head.ts';
import { assertStorageRoom, type StorageAllowance } from '../capabilities/storage-usage.ts';
import { FileTooLargeError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { UUID } from '../ids.ts';
import type { UploadMeta } from '../trpc/upload-body.ts';
import { MAX_UPLOAD_BYTES } from '../uploads/uploads.schema.ts';
import type { DocumentFiles, DocumentsDeps } from './document-files.ts';
import { findDocument, findDocuments } from './documents.repo.ts';
import type { StagedUpload } from './documents.schema.ts';
import { CompoundFileScanner, HEAD_BYTES, judgeHead } from './upload-type.ts';

/**
 * Formats checked against the extraction limits before they are kept: office ZIP packages, which a
 * few kilobytes can make unpack to gigabytes, and PDFs, whose page tree can keep a reader busy.
 */
const CHECKED_AT_UPLOAD = new Set([
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/pdf',
  'image/png',
  'image/gif',
]);

/** A staged upload this old that is no document was left by a process that ended between staging and creating it. */
export const STALE_UPLOAD_MS = 60 * 60 * 1000;
/** How often a process looks for a tenant's stale uploads, at most (when the tenant uploads). */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

export interface StagedRecord extends StagedUpload {
  stagedAt: string;
}

/** Uploads staged in the tenant's blob area before they become documents, and the sweep of those left behind. */
export function createDocumentUploads(deps: DocumentsDeps, files: DocumentFiles) {
  const { db, blobs } = deps;
  const { documentsPrefix, keys } = files;
  const maxUploadBytes = deps.maxUploadBytes ?? MAX_UPLOAD_BYTES;
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[documents] ${message}`, detail ?? ''));

  async function uploadPolicy(actor: Actor): Promise<{ maxFileBytes: number; storage?: StorageAllowance }> {
    const allowed = await deps.capabilities?.require(actor.tenantId, 'documents.upload');
    const planLimit = allowed?.limits.maxFileBytes;
    const storage = await deps.storageUsage?.allowance(actor.tenantId);
    return { maxFileBytes: Math.min(maxUploadBytes, typeof planLimit === 'number' ? planLimit : maxUploadBytes), ...(storage ? { storage } : {}) };
  }

  const sweptAt = new Map<string, number>();

  /**
   * Removes the tenant's uploads that never became documents and were last written before
   * `now - STALE_UPLOAD_MS`: what a process left when it ended between staging and creating (or
   * discarding) them. A document's files are never touched. Answers the upload ids removed.
   */
  async function sweepStaleUploads(tenantId: string, now = Date.now()): Promise<string[]> {
    sweptAt.set(tenantId, now);
    const prefix = documentsPrefix(tenantId);
    const byId = new Map<string, BlobObject[]>();
    for (const object of await blobs.list(prefix, 100_000)) {
      const id = object.key.slice(prefix.length).split('/')[0]!;
      byId.set(id, [...(byId.get(id) ?? []), object]);
    }
    const stale = [...byId].filter(([id, objects]) => UUID.test(id) && objects.every((o) => now - o.modifiedAt.getTime() >= STALE_UPLOAD_MS)).map(([id]) => id);
    if (!stale.length) return [];
    const documents = new Set((await db.inTenant(tenantId, (tx) => findDocuments(tx, stale))).map((d) => d.id));
    const removed = stale.filter((id) => !documents.has(id));
    for (const id of removed) for (const object of byId.get(id)!) await blobs.delete(object.key);
    return removed;
  }

  return {
    /** What the caller may upload: refuses (403) a tenant without `documents.upload`; its plan's largest file otherwise. */
    uploadPolicy,

    sweepStaleUploads,

    /**
     * Streams a file into the tenant's blob area under a new upload id, judged by its content (415
     * for a type outside seed 000's list, before anything is stored when the leading bytes tell)
     * and measured against the plan's limit (413 as soon as it is passed, leaving nothing behind).
     * A DOCX, XLSX or PDF is checked on the extractor's reading threads before it is kept: one past
     * the extraction limits (files, bytes or ratio a package unpacks to; the time a PDF's page tree
     * takes to walk) is 400 on `file`, leaving nothing behind.
     * The upload becomes a document with `create`, or goes with `discard`.
     */
    async stage(actor: Actor, meta: UploadMeta, body: AsyncIterable<Uint8Array>): Promise<StagedUpload> {
      const { maxFileBytes, storage } = await uploadPolicy(actor);
      if (Date.now() - (sweptAt.get(actor.tenantId) ?? 0) >= SWEEP_EVERY_MS) {
        sweepStaleUploads(actor.tenantId).catch((error: unknown) => log(`removing stale uploads of tenant ${actor.tenantId} failed`, error));
      }
      const uploadId = randomUUID();
      const at = keys(actor.tenantId, uploadId);
      const { head, all } = await splitHead(body, HEAD_BYTES);
      if (head.byteLength === 0) throw ValidationError.field('file', 'must not be empty');
      if (head.byteLength > maxFileBytes) throw new FileTooLargeError(maxFileBytes);
      assertStorageRoom(storage, head.byteLength);
      const judged = await judgeHead(head, meta.filename);
      const scanner = 'compound' in judged ? new CompoundFileScanner() : undefined;
      const hash = createHash('sha256');
      let size = 0;
      const room = storage && (await deps.storageUsage?.reserve(actor.tenantId, storage));
      async function* measured(): AsyncIterable<Uint8Array> {
        for await (const chunk of all) {
          size += chunk.byteLength;
          if (size > maxFileBytes) throw new FileTooLargeError(maxFileBytes);
          await room?.cover(size);
          hash.update(chunk);
          scanner?.push(chunk);
          yield chunk;
        }
      }
      try {
        await blobs.put(at.original, measured());
      } finally {
        await room?.release();
      }
      let contentType: string;
      try {
        contentType = scanner ? scanner.result() : (judged as { contentType: string }).contentType;
      } catch (error) {
        await blobs.delete(at.original);
        throw error;
      }
      if (CHECKED_AT_UPLOAD.has(contentType)) {
        // A ZIP package's directory and a PDF's cross-reference table sit at the end: a file past the extraction limits is refused now, before it is kept.
        // A PNG's or GIF's header is read for the pixel limit the same way.
        try {
          await files.checkFile(actor.tenantId, (await blobs.get(at.original))!, meta.filename);
        } catch (error) {
          await blobs.delete(at.original);
          throw error;
        }
      }
      const staged: StagedUpload = { uploadId, filename: meta.filename, contentType, size, sha256: hash.digest('hex') };
      await blobs.put(at.staged, JSON.stringify({ ...staged, stagedAt: new Date().toISOString() } satisfies StagedRecord));
      return staged;
    },

    /** Removes a staged upload that did not become a document; a document's file is never touched. Idempotent. */
    async discard(actor: Actor, uploadId: string): Promise<void> {
      if (!UUID.test(uploadId)) return;
      const at = keys(actor.tenantId, uploadId);
      if (!(await blobs.head(at.staged))) return;
      if (await db.inTenant(actor.tenantId, (tx) => findDocument(tx, uploadId))) return;
      await blobs.delete(at.original);
      await blobs.delete(at.staged);
    },
  };
}
