import { z } from 'zod';
import { LimitSchema, OffsetSchema } from '../query/paging.ts';

/** `uploaded` (stored, nothing asked of it), `processing` (a job runs), `ready` (the last job finished), `failed` (it did not; `failureReason` says why). */
export const DOCUMENT_STATUSES = ['uploaded', 'processing', 'ready', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const JOB_STATES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** What a job is doing while it runs. */
export const JOB_STAGES = ['extracting', 'classifying', 'chunking', 'embedding'] as const;
export type JobStage = (typeof JOB_STAGES)[number];

/** The document's type when the uploader names none. */
export const DEFAULT_DOCUMENT_TYPE = 'general';

/** Chunking in tokens (gpt-tokenizer's o200k encoding): defaults and bounds. */
export const CHUNKING = { defaultSize: 800, defaultOverlap: 400, minSize: 100, maxSize: 4000 } as const;

const plainText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    // eslint-disable-next-line no-control-regex -- refuses control characters on purpose
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

export const DocumentTypeSchema = plainText(100);
export const MAX_TAG_LENGTH = 64;
export const MAX_TAGS = 20;
export const TagSchema = plainText(MAX_TAG_LENGTH).regex(/^[^,]*$/, 'must not contain a comma');
export const TagsSchema = z.array(TagSchema).max(MAX_TAGS, `must be at most ${MAX_TAGS} tags`);
export const DocumentMetadataSchema = z.record(z.string(), z.unknown());

export const ClassificationSchema = z.object({
  category: z.string(),
  subcategory: z.string().nullable(),
  /** 0..1 */
  confidence: z.number().min(0).max(1),
  extractedData: z.record(z.string(), z.unknown()),
});
export type DocumentClassification = z.infer<typeof ClassificationSchema>;

/** A stored document. `storagePath` is the blob key of the file; `jobId` names the latest processing job. */
export const DocumentSchema = z.object({
  id: z.string(),
  filename: z.string(),
  type: z.string(),
  contentType: z.string(),
  /** Bytes. */
  size: z.number().int(),
  sha256: z.string(),
  storagePath: z.string(),
  status: z.enum(DOCUMENT_STATUSES),
  failureReason: z.string().nullable(),
  indexed: z.boolean(),
  chunkCount: z.number().int(),
  pages: z.number().int().nullable(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  classification: ClassificationSchema.nullable(),
  jobId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Document = z.infer<typeof DocumentSchema>;

export const DocumentPageSchema = z.object({ items: z.array(DocumentSchema), total: z.number().int() });
export type DocumentPage = z.infer<typeof DocumentPageSchema>;

/** A file written to the tenant's blob area, not yet a document: `create` makes it one, `discard` removes it. */
export const StagedUploadSchema = z.object({
  uploadId: z.string(),
  filename: z.string(),
  /** Judged by the file's content. */
  contentType: z.string(),
  size: z.number().int(),
  sha256: z.string(),
});
export type StagedUpload = z.infer<typeof StagedUploadSchema>;

export const UploadPolicySchema = z.object({
  maxFileBytes: z.number().int(),
  /** The tenant's storage quota and the bytes it stores; absent when its plan sets none. */
  storage: z.object({ quotaBytes: z.number().int(), usedBytes: z.number().int() }).optional(),
});

export const UploadRefSchema = z.object({ uploadId: z.string().max(100) }).strict();

export const CreateDocumentInputSchema = z
  .object({
    uploadId: z.string().max(100),
    type: DocumentTypeSchema.optional(),
    tags: TagsSchema.default([]),
    metadata: DocumentMetadataSchema.default({}),
    autoClassify: z.boolean({ error: 'must be true or false' }).default(false),
    autoIndex: z.boolean({ error: 'must be true or false' }).default(false),
  })
  .strict();
export type CreateDocumentInput = z.infer<typeof CreateDocumentInputSchema>;

export const DocumentRefSchema = z.object({ id: z.string().max(100) }).strict();

export const ListDocumentsInputSchema = z
  .object({
    type: DocumentTypeSchema.optional(),
    /** Documents holding every one of these tags. */
    tags: TagsSchema.optional(),
    status: z.enum(DOCUMENT_STATUSES).optional(),
    indexed: z.boolean({ error: 'must be true or false' }).optional(),
    limit: LimitSchema,
    offset: OffsetSchema.default(0),
  })
  .strict();
export type ListDocumentsInput = z.infer<typeof ListDocumentsInputSchema>;

const ChunkSizeSchema = z
  .number({ error: 'must be a whole number' })
  .int('must be a whole number')
  .min(CHUNKING.minSize, `must be between ${CHUNKING.minSize} and ${CHUNKING.maxSize}`)
  .max(CHUNKING.maxSize, `must be between ${CHUNKING.minSize} and ${CHUNKING.maxSize}`);
const ChunkOverlapSchema = z.number({ error: 'must be a whole number' }).int('must be a whole number').min(0, 'must not be negative');

/** Token sizes of chunks: the overlap defaults to 400 or half the size, whichever is smaller, and may be at most half the size. */
export const ChunkingOptionsSchema = z.object({ chunkSize: ChunkSizeSchema.optional(), chunkOverlap: ChunkOverlapSchema.optional() }).strict();
const chunkingFields = ChunkingOptionsSchema.shape;
function withChunkingDefaults<T extends { chunkSize?: number; chunkOverlap?: number }>(input: T, ctx: z.RefinementCtx): (T & { chunkSize: number; chunkOverlap: number }) {
  const chunkSize = input.chunkSize ?? CHUNKING.defaultSize;
  const chunkOverlap = input.chunkOverlap ?? Math.min(CHUNKING.defaultOverlap, Math.floor(chunkSize / 2));
  if (chunkOverlap > chunkSize / 2) ctx.addIssue({ code: 'custom', path: ['chunkOverlap'], message: `must be at most half of chunkSize (${Math.floor(chunkSize / 2)})` });
  return { ...input, chunkSize, chunkOverlap };
}

export const IndexDocumentInputSchema = z
  .object({ id: z.string().max(100), ...chunkingFields })
  .strict()
  .transform(withChunkingDefaults);
export type IndexDocumentInput = z.infer<typeof IndexDocumentInputSchema>;

/** v4 `rag-index`: the document and, optionally, the chunking. */
export const SubmitIndexJobFieldsSchema = z.object({ documentId: z.string({ error: 'is required' }).max(100), ...chunkingFields }).strict();
export const SubmitIndexJobInputSchema = SubmitIndexJobFieldsSchema.transform(withChunkingDefaults);
export type SubmitIndexJobInput = z.infer<typeof SubmitIndexJobInputSchema>;

/** The answer of v3 `POST /documents/:id/index`: `indexed` once done, `processing` while the job still runs after the wait, `failed` with `error`. */
export const IndexOutcomeSchema = z.object({
  documentId: z.string(),
  chunks: z.number().int(),
  status: z.enum(['indexed', 'processing', 'failed']),
  jobId: z.string(),
  error: z.string().optional(),
});
export type IndexOutcome = z.infer<typeof IndexOutcomeSchema>;

export const DocumentJobSchema = z.object({
  jobId: z.string(),
  documentId: z.string(),
  /** The Temporal workflow that runs it (`document-<id>-index`). */
  workflowId: z.string(),
  state: z.enum(JOB_STATES),
  stage: z.enum(JOB_STAGES).nullable(),
  classify: z.boolean(),
  index: z.boolean(),
  chunkSize: z.number().int().nullable(),
  chunkOverlap: z.number().int().nullable(),
  /** Chunks stored, once indexing finished. */
  chunks: z.number().int().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
});
export type DocumentJob = z.infer<typeof DocumentJobSchema>;

export const JobRefSchema = z.object({ jobId: z.string().max(100) }).strict();

export const SearchDocumentsInputSchema = z
  .object({
    query: z.string({ error: 'is required' }).trim().min(1, 'is required').max(2000, 'must be at most 2000 characters'),
    limit: z.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be between 1 and 100').max(100, 'must be between 1 and 100').default(10),
    /** On the search service's 0..1 scale (docs/decisions/0080-search-scores.md). */
    minScore: z.number({ error: 'must be a number' }).min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
    type: DocumentTypeSchema.optional(),
  })
  .strict();
export type SearchDocumentsInput = z.infer<typeof SearchDocumentsInputSchema>;

export const DocumentSearchResultSchema = z.object({
  documentId: z.string(),
  filename: z.string(),
  chunk: z.string(),
  /** 0..1, higher is better. */
  score: z.number(),
  metadata: z.record(z.string(), z.unknown()),
});
export const DocumentSearchResultsSchema = z.object({ results: z.array(DocumentSearchResultSchema) });
export type DocumentSearchResults = z.infer<typeof DocumentSearchResultsSchema>;

/** The file's description, first piece of a download. */
export const DocumentFileSchema = z.object({ filename: z.string(), contentType: z.string(), size: z.number().int(), sha256: z.string() });
export type DocumentFile = z.infer<typeof DocumentFileSchema>;

/** What a workflow's activities are given: the tenant, the job and its document. */
export interface DocumentJobRef {
  tenantId: string;
  documentId: string;
  jobId: string;
}

/** The workflow's input: the job, and what it does. */
export interface DocumentJobPlan extends DocumentJobRef {
  classify: boolean;
  index: boolean;
  chunkSize: number;
  chunkOverlap: number;
}
