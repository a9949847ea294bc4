import { z } from 'zod';
import {
  DocumentJobSchema,
  DocumentRefSchema,
  DocumentSchema,
  JobRefSchema,
  SubmitIndexJobFieldsSchema,
  TenantRefSchema,
  ValidationError,
  type CallContext,
  type ControlPlane,
  type Document,
} from '../../../control-plane/contracts.ts';
import { discardDocuments, documentFields, receiveDocuments, UploadFormSchema } from '../document-uploads.ts';
import { listOf, tenantField, tenantQuery } from '../params.ts';
import { optionalObject, queryValue, tenantOption } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** Files one v4 upload may carry. */
export const MAX_V4_UPLOAD_FILES = 20;

const FORM_FIELDS = ['tenant_id', 'processing_mode', 'type', 'tags', 'metadata'] as const;

/**
 * The tenant of a v4 form: `tenant_id` in the query string, or as a form field sent before the
 * files (the files are streamed to the tenant's area as they arrive); not both.
 */
function formTenant(request: Request, fields: ReadonlyMap<string, string>): string | undefined {
  const fromQuery = queryValue(new URL(request.url).searchParams, 'tenant_id');
  const fromForm = fields.get('tenant_id');
  if (fromQuery !== undefined && fromForm !== undefined) throw ValidationError.field('tenant_id', 'is given in both the query string and the form');
  return fromQuery ?? fromForm;
}

/** The text fields of a v4 upload form, as text. */
const V4UploadFormSchema = z.object({
  tenant_id: TenantRefSchema.optional().describe('The tenant (id or slug), before the files; or in the query string'),
  type: UploadFormSchema.shape.type,
  tags: UploadFormSchema.shape.tags,
  metadata: UploadFormSchema.shape.metadata,
});

/** A v4 upload form with its files, in one processing mode. */
const uploadForm = (mode: 'full' | 'classification') => ({
  multipart: V4UploadFormSchema.extend({ processing_mode: z.literal(mode).optional() }),
  files: { files: { description: 'The documents', multiple: MAX_V4_UPLOAD_FILES, required: true } },
  description: 'The files and their description',
});

function checkMode(fields: ReadonlyMap<string, string>, expected: 'full' | 'classification'): void {
  const mode = fields.get('processing_mode') ?? expected;
  if (mode !== expected) throw ValidationError.field('processing_mode', `must be "${expected}" on this route`);
}

/** Makes documents of the staged files; should one fail, those made are deleted and the rest discarded, so the upload is all or nothing. */
async function createAll(cp: ControlPlane, call: CallContext, uploadIds: string[], make: (uploadId: string) => Promise<Document>): Promise<Document[]> {
  const made: Document[] = [];
  try {
    for (const uploadId of uploadIds) made.push(await make(uploadId));
    return made;
  } catch (error) {
    for (const document of made) await cp.mutation(call, 'documents', 'remove', { id: document.id }).catch(() => undefined);
    await discardDocuments(cp, call, uploadIds.slice(made.length));
    throw error;
  }
}

/** Receives a v4 upload form (`files`, its tenant in the query string or the form) and checks its `processing_mode`. */
async function receive(cp: ControlPlane, request: Request, call: (tenant?: string) => CallContext, headers: Record<string, string | number>, mode: 'full' | 'classification') {
  const received = await receiveDocuments(cp, request, {
    headers,
    fileField: 'files',
    maxFiles: MAX_V4_UPLOAD_FILES,
    textFields: FORM_FIELDS,
    callOf: (fields) => call(formTenant(request, fields)),
    tenantKnownUpfront: new URL(request.url).searchParams.has('tenant_id'),
    beforeFiles: ['tenant_id'],
  });
  try {
    checkMode(received.fields, mode);
  } catch (error) {
    await discardDocuments(cp, received.call, received.uploadIds);
    throw error;
  }
  return received;
}

/**
 * v4 documents: uploads of several files (`processing_mode=full`: each is classified and indexed
 * by its job), classification of uploaded files (`processing_mode=classification`: answered with
 * each file's classification), a document's record, and indexing jobs (`rag-index`) with their state.
 */
export const v4DocumentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/data/documents/upload',
    procedure: 'documents.create',
    tenant: 'query',
    rateLimit: 'uploads',
    input: { query: tenantQuery, body: uploadForm('full') },
    output: { 201: { description: 'The documents, each with its job (`jobId`)', schema: listOf(DocumentSchema) } },
    docs: {
      operationId: 'uploadDocuments',
      summary: 'Upload documents and process them',
      tag: 'Documents',
      description: 'A form with one or more files (`files`, up to 20), each streamed to the blob store and judged by its content; each becomes a document whose job classifies and indexes it. `tenant_id` in the query string or as a field before the files. All files or none.',
      errors: [409, 415],
    },
    sample: { body: {} },
    parse: 'none',
    async handler({ request, set, call, procedure, controlPlane }) {
      const received = await receive(controlPlane, request, call, set.headers, 'full');
      const documents = await createAll(controlPlane, received.call, received.uploadIds, (uploadId) =>
        procedure.mutation(received.call, { uploadId, ...documentFields(received.fields), autoClassify: true, autoIndex: true }),
      );
      set.status = 201;
      return { data: documents };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/documents/classify',
    procedure: 'documents.classify',
    tenant: 'query',
    rateLimit: 'uploads',
    input: { query: tenantQuery, body: uploadForm('classification') },
    output: { 201: { description: 'The documents with their classification', schema: listOf(DocumentSchema) } },
    docs: {
      operationId: 'classifyDocuments',
      summary: 'Upload documents and classify them',
      tag: 'Documents',
      description: 'As upload, but each document is classified at once (no indexing); the answer carries each classification.',
      errors: [409, 415],
    },
    sample: { body: {} },
    parse: 'none',
    async handler({ request, set, call, procedure, controlPlane }) {
      const { call: caller, fields, uploadIds } = await receive(controlPlane, request, call, set.headers, 'classification');
      const documents = await createAll(controlPlane, caller, uploadIds, async (uploadId) => {
        const document = await controlPlane.mutation(caller, 'documents', 'create', { uploadId, ...documentFields(fields) });
        try {
          await procedure.mutation(caller, { id: document.id });
          return await controlPlane.query(caller, 'documents', 'get', { id: document.id });
        } catch (error) {
          await controlPlane.mutation(caller, 'documents', 'remove', { id: document.id }).catch(() => undefined);
          throw error;
        }
      });
      set.status = 201;
      return { data: documents };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/data/documents/records/:documentId',
    procedure: 'documents.get',
    tenant: 'query',
    input: { path: { documentId: DocumentRefSchema.shape.id }, query: tenantQuery },
    output: { 200: { description: 'The document', schema: DocumentSchema } },
    docs: {
      operationId: 'getDocumentRecord',
      summary: "A document's record: storage path, status, classification, chunk count",
      tag: 'Documents',
    },
    sample: { params: { documentId: NIL_ID } },
    handler: ({ request, params, call, procedure }) =>
      procedure.query(call(queryValue(new URL(request.url).searchParams, 'tenant_id')), { id: params.documentId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/data/documents/rag-index',
    procedure: 'documents.submitIndexJob',
    tenant: 'query',
    input: { body: { schema: SubmitIndexJobFieldsSchema.extend(tenantField) } },
    output: { 202: { description: 'The job, queued', schema: DocumentJobSchema } },
    docs: {
      operationId: 'submitIndexJob',
      summary: 'Submit an indexing job for a document',
      tag: 'Documents',
      description: 'Starts the job (a Temporal workflow `document-<id>-index`) and answers at once; read its state at `GET /data/documents/rag-index/{jobId}`.',
      errors: [409],
    },
    aliases: { document_id: 'documentId', chunk_size: 'chunkSize', chunk_overlap: 'chunkOverlap' },
    sample: { body: { document_id: NIL_ID } },
    handler: async ({ request, body, set, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const job = await procedure.mutation(call(tenantId), optionalObject(rest));
      set.status = 202;
      return job;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/data/documents/rag-index/:jobId',
    procedure: 'documents.job',
    tenant: 'query',
    input: { path: JobRefSchema.shape, query: tenantQuery },
    output: { 200: { description: 'The job', schema: DocumentJobSchema } },
    docs: { operationId: 'getIndexJob', summary: 'The state of an indexing job', tag: 'Documents' },
    sample: { params: { jobId: NIL_ID } },
    handler: ({ request, params, call, procedure }) =>
      procedure.query(call(queryValue(new URL(request.url).searchParams, 'tenant_id')), { jobId: params.jobId }),
  }),
];
