import { createHash, randomUUID } from 'node:crypto';
import { tenantBlobPrefix, type BlobObject, type BlobStore } from '../blobs/blob-store.ts';
import { splitHead } from '../blobs/stream-head.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import { secondsToNextUtcDay } from '../capabilities/daily-limit.ts';
import { classifyDocument, type Classification, type ClassificationInput } from '../classify/classify.ts';
import type { Db, Tx } from '../db/client.ts';
import { ConflictError, DomainError, FileTooLargeError, NotFoundError, RateLimitError, ValidationError } from '../errors.ts';
import { createExtractor, type Extractor, type Segment } from '../extract/extractor.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { UUID } from '../ids.ts';
import { assertStorageRoom, type StorageAllowance, type StorageUsage } from '../capabilities/storage-usage.ts';
import { INDEX_DOCUMENT } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import type { Outbox } from '../outbox/outbox.service.ts';
import type { UploadMeta } from '../trpc/upload-body.ts';
import { MAX_UPLOAD_BYTES } from '../uploads/uploads.schema.ts';
import { chunkSegments, type DocumentChunk } from './chunking.ts';
import {
  advanceJob,
  closeJob,
  deleteDocument,
  findDocument,
  findDocuments,
  findJob,
  findOpenJob,
  insertDocument,
  insertJob,
  listDocuments,
  meterOcrPages,
  setClassification,
  setDocumentStatus,
  setIndexed,
  setPages,
  type StoredJob,
} from './documents.repo.ts';
import {
  CHUNKING,
  DEFAULT_DOCUMENT_TYPE,
  type CreateDocumentInput,
  type Document,
  type DocumentClassification,
  type DocumentFile,
  type DocumentJob,
  type DocumentJobPlan,
  type DocumentJobRef,
  type DocumentPage,
  type DocumentSearchResults,
  type IndexOutcome,
  type JobStage,
  type ListDocumentsInput,
  type SearchDocumentsInput,
  type StagedUpload,
} from './documents.schema.ts';
import { CompoundFileScanner, HEAD_BYTES, judgeHead } from './upload-type.ts';

/** A staged upload this old that is no document was left by a process that ended between staging and creating it. */
export const STALE_UPLOAD_MS = 60 * 60 * 1000;
/** How often a process looks for a tenant's stale uploads, at most (when the tenant uploads). */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/** Passages of one document an answer takes when a request names it: a long document's first chunks. */
const MAX_CONTEXT_PASSAGES = 50;

/**
 * The search service's operations that documents use (docs/decisions/0075-document-jobs.md): chunks of
 * a source replaced at once, removed, and found again. `tenant` is the tenant acted in.
 */
export interface DocumentSearchIndex {
  replaceSource(tenant: { tenantId: string }, source: { kind: 'document'; id: string; type: string }, chunks: DocumentChunk[]): Promise<{ chunkCount: number }>;
  removeSource(tenant: { tenantId: string }, source: { kind: 'document'; id: string }): Promise<void>;
  search(
    tenant: { tenantId: string },
    query: { query: string; limit?: number; minScore?: number; kinds?: Array<'document'>; types?: string[] },
  ): Promise<Array<{ sourceId: string; content: string; score: number; metadata: Record<string, unknown> }>>;
}

export interface DocumentsDeps {
  db: Db;
  blobs: BlobStore;
  workflows?: WorkflowsPort;
  /** Where a job's workflow start is written in the job's transaction (control-plane/outbox). */
  outbox?: Pick<Outbox, 'enqueue' | 'dispatch'>;
  /** `documents.upload` (and its `maxFileBytes`), and `documents.ocr` for reading images. */
  capabilities?: Pick<CapabilitiesService, 'require'>;
  /** The tenant's storage quota, which uploads must fit in. */
  storageUsage?: Pick<StorageUsage, 'allowance'>;
  search?: DocumentSearchIndex;
  /** The process's extractor, made on first use (its OCR worker starts on the first image). */
  extractor?: () => Extractor;
  classify?: (input: ClassificationInput) => Classification;
  /** The largest upload, whatever the plan: 100 MB (seed 000). */
  maxUploadBytes?: number;
  /** How long v3 `index` waits for its job before answering `processing`. */
  indexWaitMs?: number;
  log?: (message: string, detail?: unknown) => void;
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;

/** Images whose text is read by OCR (a GIF's first frame). */
const OCR_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

const INDEX_WAIT_MS = 25_000;

/** What a job's activities keep between steps, beside the file: the text with its positions, and the chunks. */
interface StoredExtraction {
  sha256: string;
  pages: number | null;
  segments: Segment[];
}

interface StagedRecord extends StagedUpload {
  stagedAt: string;
}

/**
 * Documents: uploads streamed to the tenant's blob area and judged by content, their records
 * (row-level security per tenant), inline classification, and processing jobs that run as one
 * Temporal workflow per document (`document-<id>-index`): extract, classify, chunk, embed and
 * store. Every step of a job is idempotent (it rewrites what it wrote), so a retried or resumed
 * job ends with exactly the chunks of one run.
 */
export function createDocumentsService(deps: DocumentsDeps) {
  const { db, blobs } = deps;
  const maxUploadBytes = deps.maxUploadBytes ?? MAX_UPLOAD_BYTES;
  const classify = deps.classify ?? classifyDocument;
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[documents] ${message}`, detail ?? ''));
  let extractor: Extractor | undefined;
  const extractorOf = () => (extractor ??= deps.extractor?.() ?? createExtractor());

  /** Where a tenant's documents and staged uploads live, one folder per id. */
  const documentsPrefix = (tenantId: string) => `${tenantBlobPrefix(tenantId)}documents/`;
  const prefixOf = (tenantId: string, id: string) => `${documentsPrefix(tenantId)}${id.toLowerCase()}/`;
  const keys = (tenantId: string, id: string) => {
    const prefix = prefixOf(tenantId, id);
    return { original: `${prefix}original`, staged: `${prefix}staged.json`, extraction: `${prefix}extraction.json`, chunks: `${prefix}chunks.json` };
  };

  const workflows = () => {
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'the workflow engine is not configured');
    return deps.workflows;
  };
  const outbox = () => {
    if (!deps.outbox) throw new DomainError('INTERNAL_ERROR', 'the workflow engine is not configured');
    return deps.outbox;
  };
  const searchIndex = () => {
    if (!deps.search) throw new DomainError('INTERNAL_ERROR', 'the search index is not configured');
    return deps.search;
  };
  const tenantOf = (tenantId: string) => ({ tenantId });

  async function readJson<T>(key: string): Promise<T | undefined> {
    const bytes = await blobs.get(key);
    return bytes ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as T) : undefined;
  }

  async function requireDocument(tenantId: string, id: string): Promise<Document> {
    const document = await db.inTenant(tenantId, (tx) => findDocument(tx, id));
    if (!document) throw new NotFoundError('document');
    return document;
  }

  /** Reading an image's text needs `documents.ocr` (403 naming it). */
  async function requireReadable(tenantId: string, contentType: string): Promise<void> {
    if (OCR_TYPES.has(contentType)) await deps.capabilities?.require(tenantId, 'documents.ocr');
  }

  /** Counts pages about to be read by OCR against the plan's `maxPagesPerDay` (429 until the next UTC day once it is reached). */
  async function meterOcr(tenantId: string, pages: number): Promise<void> {
    const max = (await deps.capabilities?.require(tenantId, 'documents.ocr'))?.limits.maxPagesPerDay;
    if (typeof max !== 'number') return;
    if (!(await db.inTenant(tenantId, (tx) => meterOcrPages(tx, pages, max)))) {
      throw new RateLimitError(secondsToNextUtcDay(), `the plan's ${max} OCR pages of today (UTC) are used up`);
    }
  }

  /** The document's text with its positions: kept beside the file after the first extraction, which later steps and retries reuse. */
  async function extraction(tenantId: string, document: Document): Promise<StoredExtraction> {
    const key = keys(tenantId, document.id).extraction;
    const kept = await readJson<StoredExtraction>(key);
    if (kept?.sha256 === document.sha256) return kept;
    const bytes = await blobs.get(document.storagePath);
    if (!bytes) throw new NotFoundError('document file');
    if (OCR_TYPES.has(document.contentType)) await meterOcr(tenantId, 1);
    const extracted = await extractorOf().extract({ bytes, filename: document.filename });
    const result: StoredExtraction = { sha256: document.sha256, pages: extracted.pages ?? null, segments: extracted.segments };
    await blobs.put(key, JSON.stringify(result));
    await db.inTenant(tenantId, (tx) => setPages(tx, document.id, result.pages));
    return result;
  }

  const textOf = (kept: StoredExtraction) => kept.segments.map((s) => s.text).join('\n\n');

  function classificationOf(document: Document, kept: StoredExtraction): DocumentClassification {
    const result = classify({ text: textOf(kept), filename: document.filename, contentType: document.contentType });
    return { category: result.category, subcategory: result.subcategory ?? null, confidence: result.confidence, extractedData: result.extractedData };
  }

  const withWorkflow = (job: StoredJob): DocumentJob => ({ ...job, workflowId: INDEX_DOCUMENT.workflowId(job.documentId) });

  /** Writes the start of the job's workflow in the job's transaction `tx`: the workflow outbox starts it once `tx` has committed. */
  function queueJob(tx: Tx, tenantId: string, job: DocumentJob, chunking: { chunkSize: number; chunkOverlap: number }): Promise<string> {
    const plan: DocumentJobPlan = { tenantId, documentId: job.documentId, jobId: job.jobId, classify: job.classify, index: job.index, ...chunking };
    return outbox().enqueue(tx, { workflowType: INDEX_DOCUMENT.type, workflowId: job.workflowId, workflowKey: INDEX_DOCUMENT.key, args: [plan], reusesId: true });
  }

  /** Records a job for the document and starts it; 409 while another job of the document is open. */
  async function submitJob(
    actor: Actor,
    request: { documentId: string; classify: boolean; index: boolean; chunkSize: number; chunkOverlap: number },
  ): Promise<DocumentJob> {
    const document = await requireDocument(actor.tenantId, request.documentId);
    await requireReadable(actor.tenantId, document.contentType);
    if (request.index) searchIndex();
    workflows();
    const { job, start } = await db.inTenant(actor.tenantId, async (tx) => {
      const inserted = await insertJob(tx, {
        documentId: document.id,
        classify: request.classify,
        index: request.index,
        chunkSize: request.index ? request.chunkSize : null,
        chunkOverlap: request.index ? request.chunkOverlap : null,
        requestedBy: actor.userId || null,
      });
      if (inserted) return { job: withWorkflow(inserted), start: await queueJob(tx, actor.tenantId, withWorkflow(inserted), request) };
      const open = await findOpenJob(tx, document.id);
      throw new ConflictError('the document is being processed by another job', { jobId: open?.jobId });
    });
    await outbox().dispatch(start);
    return job;
  }

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

  async function uploadPolicy(actor: Actor): Promise<{ maxFileBytes: number; storage?: StorageAllowance }> {
    const allowed = await deps.capabilities?.require(actor.tenantId, 'documents.upload');
    const planLimit = allowed?.limits.maxFileBytes;
    const storage = await deps.storageUsage?.allowance(actor.tenantId);
    return { maxFileBytes: Math.min(maxUploadBytes, typeof planLimit === 'number' ? planLimit : maxUploadBytes), ...(storage ? { storage } : {}) };
  }

  async function getJob(actor: Actor, jobId: string): Promise<DocumentJob> {
    const job = await db.inTenant(actor.tenantId, (tx) => findJob(tx, jobId));
    if (!job) throw new NotFoundError('job');
    return withWorkflow(job);
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
      async function* measured(): AsyncIterable<Uint8Array> {
        for await (const chunk of all) {
          size += chunk.byteLength;
          if (size > maxFileBytes) throw new FileTooLargeError(maxFileBytes);
          assertStorageRoom(storage, size);
          hash.update(chunk);
          scanner?.push(chunk);
          yield chunk;
        }
      }
      await blobs.put(at.original, measured());
      let contentType: string;
      try {
        contentType = scanner ? scanner.result() : (judged as { contentType: string }).contentType;
      } catch (error) {
        await blobs.delete(at.original);
        throw error;
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
        const inserted = processing
          ? await insertJob(tx, {
              documentId: staged.uploadId,
              classify: input.autoClassify,
              index: input.autoIndex,
              chunkSize: input.autoIndex ? CHUNKING.defaultSize : null,
              chunkOverlap: input.autoIndex ? CHUNKING.defaultOverlap : null,
              requestedBy: actor.userId || null,
            })
          : undefined;
        const job = inserted && withWorkflow(inserted);
        const start = job && (await queueJob(tx, actor.tenantId, job, { chunkSize: job.chunkSize ?? CHUNKING.defaultSize, chunkOverlap: job.chunkOverlap ?? CHUNKING.defaultOverlap }));
        return { document: (await findDocument(tx, staged.uploadId))!, start };
      });
      await blobs.delete(at.staged);
      if (start) await outbox().dispatch(start);
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

    /**
     * v3 index: starts an indexing job and waits a bounded time for it. `indexed` with the chunk
     * count when it finished, `failed` with its reason, else `processing` (the job goes on).
     */
    async index(actor: Actor, input: { id: string; chunkSize: number; chunkOverlap: number }): Promise<IndexOutcome> {
      const job = await submitJob(actor, { documentId: input.id, classify: false, index: true, chunkSize: input.chunkSize, chunkOverlap: input.chunkOverlap });
      await workflows().waitForClose(job.workflowId, deps.indexWaitMs ?? INDEX_WAIT_MS);
      const current = await getJob(actor, job.jobId);
      if (current.state === 'completed') return { documentId: current.documentId, chunks: current.chunks ?? 0, status: 'indexed', jobId: current.jobId };
      if (current.state === 'failed' || current.state === 'cancelled') {
        return { documentId: current.documentId, chunks: 0, status: 'failed', jobId: current.jobId, error: current.error ?? current.state };
      }
      return { documentId: current.documentId, chunks: 0, status: 'processing', jobId: current.jobId };
    },

    /** v4 rag-index: starts an indexing job and answers at once. */
    submitIndexJob: (actor: Actor, input: { documentId: string; chunkSize: number; chunkOverlap: number }) =>
      submitJob(actor, { ...input, classify: false, index: true }),

    job: getJob,

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

    // The steps of a job, for the workflow's activities. Each is idempotent.

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

    /** Ends the extractor's OCR worker, if one started. */
    async close(): Promise<void> {
      await extractor?.close();
      extractor = undefined;
    },
  };
}
