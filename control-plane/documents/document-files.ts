import { tenantBlobPrefix, type BlobStore } from '../blobs/blob-store.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { StorageUsage } from '../capabilities/storage-usage.ts';
import { secondsToNextUtcDay } from '../capabilities/daily-limit.ts';
import { classifyDocument, type Classification, type ClassificationInput } from '../classify/classify.ts';
import type { Db } from '../db/client.ts';
import { DomainError, NotFoundError, RateLimitError } from '../errors.ts';
import { createExtractor, type Extractor, type Segment } from '../extract/extractor.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import type { Outbox } from '../outbox/outbox.service.ts';
import type { DocumentChunk } from './chunking.ts';
import { findDocument, meterOcrPages, setPages } from './documents.repo.ts';
import type { Document, DocumentClassification } from './documents.schema.ts';

/** Images whose text is read by OCR (a GIF's first frame). */
export const OCR_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

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
  storageUsage?: Pick<StorageUsage, 'allowance' | 'reserve'>;
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

/** What a job's activities keep between steps, beside the file: the text with its positions, and the chunks. */
interface StoredExtraction {
  sha256: string;
  pages: number | null;
  segments: Segment[];
}

export type DocumentFiles = ReturnType<typeof createDocumentFiles>;

/**
 * What the documents API and the document jobs share: where a document's files live in the
 * tenant's blob area, its record found or 404, its text extracted once and kept beside the file
 * (OCR metered against the plan), and its classification. One per process: it owns the extractor
 * (and so the OCR worker), which `close` ends.
 */
export function createDocumentFiles(deps: DocumentsDeps) {
  const { db, blobs } = deps;
  const classify = deps.classify ?? classifyDocument;
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
    const extracted = await extractorOf().extract({ bytes, filename: document.filename, owner: tenantId });
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

  return {
    documentsPrefix,
    keys,
    workflows,
    searchIndex,
    tenantOf,
    readJson,
    requireDocument,
    requireReadable,
    extraction,
    classificationOf,
    /** Checks a file (a DOCX or XLSX package, a PDF's page tree) on the extractor's reading threads within its limits; throws the reading's `ExtractionError` for one past them. */
    checkFile: async (tenantId: string, bytes: Uint8Array, filename: string) => void (await extractorOf().check({ bytes, filename, owner: tenantId })),
    /** Ends the extractor's OCR worker, if one started. */
    async close(): Promise<void> {
      await extractor?.close();
      extractor = undefined;
    },
  };
}
