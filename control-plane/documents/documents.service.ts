import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { UUID } from '../ids.ts';
import { INDEX_DOCUMENT } from '../temporal/workflow-contract.ts';
import type { DocumentChunk } from './chunking.ts';
import { createDocumentFiles, type DocumentFiles, type DocumentsDeps } from './document-files.ts';
import { createDocumentJobStarts } from './document-job-starts.ts';
import { createDocumentUploads, type StagedRecord } from './document-uploads.ts';
import { deleteDocument, findDocument, findDocuments, findOpenJob, insertDocument, listDocuments, setClassification, setDocumentStatus } from './documents.repo.ts';
import {
  CHUNKING,
  DEFAULT_DOCUMENT_TYPE,
  type CreateDocumentInput,
  type Document,
  type DocumentClassification,
  type DocumentFile,
  type DocumentPage,
  type DocumentSearchResults,
  type ListDocumentsInput,
  type SearchDocumentsInput,
} from './documents.schema.ts';

/** Passages of one document an answer takes when a request names it: a long document's first chunks. */
const MAX_CONTEXT_PASSAGES = 50;

export type DocumentsService = ReturnType<typeof createDocumentsService>;

/**
 * Documents as API callers use them: uploads streamed to the tenant's blob area and judged by
 * content (document-uploads.ts), their records (row-level security per tenant), inline
 * classification, and processing jobs started as one Temporal workflow per document
 * (document-job-starts.ts) whose steps run in the worker (documents.jobs.ts).
 */
/** The service's deps: the process's document files (and extractor), shared with the document jobs; default one of its own. */
export function createDocumentsService(deps: DocumentsDeps & { files?: DocumentFiles }) {
  const { db, blobs } = deps;
  const files = deps.files ?? createDocumentFiles(deps);
  const { keys, readJson, requireDocument, requireReadable, extraction, classificationOf, searchIndex, workflows, tenantOf } = files;
  const uploads = createDocumentUploads(deps, files);
  const jobs = createDocumentJobStarts(deps, files);
  const { recordJob, dispatch } = jobs;

  return {
    uploadPolicy: uploads.uploadPolicy,
    sweepStaleUploads: uploads.sweepStaleUploads,
    stage: uploads.stage,
    discard: uploads.discard,
    index: jobs.index,
    submitIndexJob: jobs.submitIndexJob,
    job: jobs.job,

    /**
     * Makes a staged upload a document (`uploaded`), and with `autoClassify` or `autoIndex` starts
     * its processing job. A staged upload of another tenant, or none, is 400 on `uploadId`.
     */
    async create(actor: Actor, input: CreateDocumentInput): Promise<Document> {
      const at = UUID.test(input.uploadId) ? keys(actor.tenantId, input.uploadId) : undefined;
      const staged = at && (await readJson<StagedRecord>(at.staged));
      if (!at || !staged) throw ValidationError.field('uploadId', 'names no upload of this tenant waiting to become a document');
      const processing = input.autoClassify || input.autoIndex;
      if (processing) {
        await requireReadable(actor.tenantId, staged.contentType);
        if (input.autoIndex) searchIndex();
        workflows();
      }
      const { document, start } = await db.inTenant(actor.tenantId, async (tx) => {
        if (await findDocument(tx, staged.uploadId)) throw new ConflictError('the upload is already a document');
        await insertDocument(tx, {
          id: staged.uploadId,
          filename: staged.filename,
          type: input.type ?? DEFAULT_DOCUMENT_TYPE,
          contentType: staged.contentType,
          size: staged.size,
          sha256: staged.sha256,
          storagePath: at.original,
          tags: [...new Set(input.tags)],
          metadata: input.metadata,
          uploadedBy: actor.userId || null,
        });
        const recorded = processing
          ? await recordJob(tx, actor, {
              documentId: staged.uploadId,
              classify: input.autoClassify,
              index: input.autoIndex,
              chunkSize: CHUNKING.defaultSize,
              chunkOverlap: CHUNKING.defaultOverlap,
            })
          : undefined;
        const start = recorded?.start;
        return { document: (await findDocument(tx, staged.uploadId))!, start };
      });
      await blobs.delete(at.staged);
      if (start) await dispatch(start);
      return document;
    },

    get: (actor: Actor, id: string) => requireDocument(actor.tenantId, id),

    async list(actor: Actor, filter: ListDocumentsInput): Promise<DocumentPage> {
      return db.inTenant(actor.tenantId, (tx) => listDocuments(tx, filter));
    },

    /** The stored file's description and its bytes as they are read. */
    async open(actor: Actor, id: string): Promise<{ file: DocumentFile; bytes: AsyncIterable<Uint8Array> }> {
      const document = await requireDocument(actor.tenantId, id);
      const bytes = await blobs.read(document.storagePath);
      if (!bytes) throw new NotFoundError('document file');
      return { file: { filename: document.filename, contentType: document.contentType, size: document.size, sha256: document.sha256 }, bytes };
    },

    /**
     * The document's text as passages an answer may use (`context.documents` of chat): its indexed
     * chunks, else its text read now and kept. Another tenant's document, or none, is NotFoundError.
     */
    async passages(actor: Actor, id: string): Promise<Array<{ source: string; sourceType: 'document'; text: string }>> {
      if (!UUID.test(id)) throw new NotFoundError('document');
      const document = await requireDocument(actor.tenantId, id);
      const chunks = await readJson<DocumentChunk[]>(keys(actor.tenantId, id).chunks);
      let texts = chunks?.map((chunk) => chunk.content);
      if (!texts) {
        await requireReadable(actor.tenantId, document.contentType);
        texts = (await extraction(actor.tenantId, document)).segments.map((segment) => segment.text);
      }
      return texts.filter((text) => text.trim()).slice(0, MAX_CONTEXT_PASSAGES).map((text) => ({ source: document.id, sourceType: 'document', text }));
    },

    /** Classifies the document now (its text extracted once and kept) and records the result; `uploaded` or `failed` becomes `ready`. */
    async classify(actor: Actor, id: string): Promise<DocumentClassification> {
      const document = await requireDocument(actor.tenantId, id);
      await requireReadable(actor.tenantId, document.contentType);
      const classification = classificationOf(document, await extraction(actor.tenantId, document));
      await db.inTenant(actor.tenantId, async (tx) => {
        await setClassification(tx, document.id, classification);
        const current = await findDocument(tx, document.id);
        if (current && (current.status === 'uploaded' || current.status === 'failed')) await setDocumentStatus(tx, document.id, 'ready');
      });
      return classification;
    },

    /** Chunks of the tenant's indexed documents matching `query`, best first, with the document's name. */
    async search(actor: Actor, input: SearchDocumentsInput): Promise<DocumentSearchResults> {
      const hits = await searchIndex().search(tenantOf(actor.tenantId), {
        query: input.query,
        limit: input.limit,
        ...(input.minScore === undefined ? {} : { minScore: input.minScore }),
        kinds: ['document'],
        ...(input.type ? { types: [input.type] } : {}),
      });
      const names = new Map((await db.inTenant(actor.tenantId, (tx) => findDocuments(tx, [...new Set(hits.map((h) => h.sourceId))]))).map((d) => [d.id, d.filename]));
      return {
        results: hits
          .filter((hit) => names.has(hit.sourceId))
          .map((hit) => ({ documentId: hit.sourceId, filename: names.get(hit.sourceId)!, chunk: hit.content, score: hit.score, metadata: hit.metadata })),
      };
    },

    /**
     * Deletes the document: an open job is cancelled (and waited for, briefly), then its chunks and
     * vectors, its objects in the blob store and its record go. Each step is idempotent, so a
     * failed delete can be repeated.
     */
    async remove(actor: Actor, id: string): Promise<void> {
      const document = await requireDocument(actor.tenantId, id);
      const open = await db.inTenant(actor.tenantId, (tx) => findOpenJob(tx, document.id));
      if (open) {
        await workflows().cancel(INDEX_DOCUMENT.workflowId(document.id));
        await workflows().waitForClose(INDEX_DOCUMENT.workflowId(document.id), 10_000);
      }
      await deps.search?.removeSource(tenantOf(actor.tenantId), { kind: 'document', id: document.id });
      const at = keys(actor.tenantId, document.id);
      for (const key of [at.chunks, at.extraction, at.staged, at.original]) await blobs.delete(key);
      await db.inTenant(actor.tenantId, (tx) => deleteDocument(tx, document.id));
    },
  };
}
