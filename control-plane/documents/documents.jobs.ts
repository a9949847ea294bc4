import type { Db } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { chunkSegments, type DocumentChunk } from './chunking.ts';
import type { DocumentFiles } from './document-files.ts';
import { advanceJob, closeJob, findDocument, setClassification, setDocumentStatus, setIndexed } from './documents.repo.ts';
import type { DocumentClassification, DocumentJobRef, JobStage } from './documents.schema.ts';

export type DocumentJobs = ReturnType<typeof createDocumentJobs>;

/**
 * The steps of a document job, for the workflow's activities (workers/activities/documents.activities.ts):
 * extract, classify, chunk, embed and store. Every step is idempotent (it rewrites what it wrote),
 * so a retried or resumed job ends with exactly the chunks of one run.
 */
export function createDocumentJobs(deps: { db: Db; blobs: BlobStore; files: DocumentFiles }) {
  const { db, blobs, files } = deps;
  const { requireDocument, extraction, classificationOf, keys, readJson, searchIndex, tenantOf } = files;

  /** Moves an open job to `stage` (and its document to `processing`); `false` once the job is closed, which ends the run. */
  async function enterStage(ref: DocumentJobRef, stage: JobStage | null): Promise<boolean> {
    return db.inTenant(ref.tenantId, async (tx) => {
      const open = await advanceJob(tx, ref.jobId, stage);
      if (open && stage === null) await setDocumentStatus(tx, ref.documentId, 'processing');
      return open;
    });
  }

  /** The document a job works on; a deleted one ends the job (404, which the workflow does not retry). */
  const jobDocument = (ref: DocumentJobRef) => requireDocument(ref.tenantId, ref.documentId);

  return {
    /** Marks the job running and its document `processing`; `false` when the job was closed meanwhile. */
    beginJob: (ref: DocumentJobRef) => enterStage(ref, null),

    /** Extracts the text (kept beside the file, so a retry or a later step reads it again). */
    async extractText(ref: DocumentJobRef): Promise<{ segments: number; pages: number | null }> {
      await enterStage(ref, 'extracting');
      const kept = await extraction(ref.tenantId, await jobDocument(ref));
      return { segments: kept.segments.length, pages: kept.pages };
    },

    async classifyText(ref: DocumentJobRef): Promise<DocumentClassification> {
      await enterStage(ref, 'classifying');
      const document = await jobDocument(ref);
      const classification = classificationOf(document, await extraction(ref.tenantId, document));
      await db.inTenant(ref.tenantId, (tx) => setClassification(tx, document.id, classification));
      return classification;
    },

    /** Cuts the text into chunks and keeps them beside the file; the same text and sizes give the same chunks. */
    async chunkText(ref: DocumentJobRef, options: { chunkSize: number; chunkOverlap: number }): Promise<{ chunks: number }> {
      await enterStage(ref, 'chunking');
      const document = await jobDocument(ref);
      const chunks = chunkSegments((await extraction(ref.tenantId, document)).segments, options);
      await blobs.put(keys(ref.tenantId, document.id).chunks, JSON.stringify(chunks));
      return { chunks: chunks.length };
    },

    /**
     * Embeds and stores the kept chunks, replacing every chunk the document had (a retry or a
     * re-index leaves one copy). A document deleted meanwhile has its chunks removed again.
     */
    async storeChunks(ref: DocumentJobRef): Promise<{ chunks: number }> {
      await enterStage(ref, 'embedding');
      const document = await jobDocument(ref);
      const chunks = await readJson<DocumentChunk[]>(keys(ref.tenantId, document.id).chunks);
      if (!chunks) throw new NotFoundError('document chunks');
      const index = searchIndex();
      const { chunkCount } = await index.replaceSource(tenantOf(ref.tenantId), { kind: 'document', id: document.id, type: document.type }, chunks);
      const stillThere = await db.inTenant(ref.tenantId, async (tx) => {
        if (!(await findDocument(tx, document.id))) return false;
        await setIndexed(tx, document.id, chunkCount);
        return true;
      });
      if (!stillThere) {
        await index.removeSource(tenantOf(ref.tenantId), { kind: 'document', id: document.id });
        throw new NotFoundError('document');
      }
      return { chunks: chunkCount };
    },

    /** Closes the job as completed and makes its document `ready`. */
    async finishJob(ref: DocumentJobRef, outcome: { chunks: number | null }): Promise<void> {
      await db.inTenant(ref.tenantId, async (tx) => {
        if (await closeJob(tx, ref.jobId, { state: 'completed', chunks: outcome.chunks })) await setDocumentStatus(tx, ref.documentId, 'ready');
      });
    },

    /** Closes the job as failed (or cancelled) with the reason, which the document's `failureReason` repeats. */
    async failJob(ref: DocumentJobRef, outcome: { cancelled: boolean; reason: string }): Promise<void> {
      await db.inTenant(ref.tenantId, async (tx) => {
        const closed = await closeJob(tx, ref.jobId, { state: outcome.cancelled ? 'cancelled' : 'failed', error: outcome.reason });
        if (closed) await setDocumentStatus(tx, ref.documentId, 'failed', outcome.cancelled ? `cancelled: ${outcome.reason}` : outcome.reason);
      });
    },
  };
}
