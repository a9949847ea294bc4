import { z } from 'zod';
import {
  ChunkingOptionsSchema,
  ClassificationSchema,
  DocumentRefSchema,
  DocumentSchema,
  DocumentSearchResultsSchema,
  IndexOutcomeSchema,
  ListDocumentsInputSchema,
  SearchDocumentsInputSchema,
  untrusted,
  type Document,
} from '../../../control-plane/contracts.ts';
import { V3_BASE } from '../bases.ts';
import { discardDocuments, documentFields, formFlag, receiveDocuments, UploadFormSchema } from '../document-uploads.ts';
import { fileResponse } from '../file-download.ts';
import { param } from '../params.ts';
import { bodyWithPath, jsonObjectBody, optionalObject, queryValue, untrustedQueryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** The v3 document record (seed 000): `url` downloads the file with the caller's credentials. */
export const V3DocumentSchema = DocumentSchema.pick({
  id: true,
  filename: true,
  type: true,
  contentType: true,
  size: true,
  status: true,
  failureReason: true,
  tags: true,
  indexed: true,
  chunkCount: true,
  classification: true,
  metadata: true,
  createdAt: true,
  updatedAt: true,
}).extend({ url: z.string() });
export const V3DocumentPageSchema = z.object({ data: z.array(V3DocumentSchema), total: z.number().int(), hasMore: z.boolean() });

export const v3DocumentUrl = (id: string) => `${V3_BASE}/documents/${id}/file`;

export function v3Document(document: Document): z.infer<typeof V3DocumentSchema> {
  const { id, filename, type, contentType, size, status, failureReason, tags, indexed, chunkCount, classification, metadata, createdAt, updatedAt } = document;
  return { id, filename, type, contentType, size, url: v3DocumentUrl(id), status, failureReason, tags, indexed, chunkCount, classification, metadata, createdAt, updatedAt };
}

/** The v3 upload form's text fields. */
const UPLOAD_FIELDS = ['type', 'tags', 'autoClassify', 'autoIndex', 'metadata'] as const;

/** v3 documents: upload (multipart, streamed), list, get, download, classify, index, search, delete. */
export const v3DocumentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/documents',
    procedure: 'documents.create',
    tenant: 'header',
    rateLimit: 'uploads',
    input: {
      body: { multipart: UploadFormSchema, files: { file: { description: 'The document', required: true } }, description: 'The file and its description' },
    },
    output: { 201: { description: 'The document, `uploaded`', schema: V3DocumentSchema } },
    docs: {
      operationId: 'uploadDocument',
      summary: 'Upload a document',
      tag: 'Documents',
      description: 'A form with the file, streamed to the blob store. Its type is judged by its content (PDF, DOC, DOCX, TXT, RTF, XLS, XLSX, CSV, JPG, PNG, GIF, WEBP); at most 100 MB (less on some plans). A file that would pass the tenant\'s storage quota (storage.blob `maxStoredBytes`) is 413, by its declared length before it is read. A DOCX or XLSX that unpacks past the extraction limits (10 000 files, 200 MiB, or 100 times its size) is 400 on `file` naming the limit, and nothing is stored. `autoClassify` and `autoIndex` start a processing job. 50 uploads per minute per tenant.',
      errors: [409, 415],
    },
    // Upload routes take a multipart form: a JSON body is refused (400) after the caller's tenant is checked.
    sample: { body: {} },
    // The body is a form streamed to the blob store: Elysia must not read it.
    parse: 'none',
    async handler({ request, set, call, procedure, controlPlane }) {
      const { call: caller, fields, uploadIds } = await receiveDocuments(controlPlane, request, {
        headers: set.headers,
        fileField: 'file',
        maxFiles: 1,
        textFields: UPLOAD_FIELDS,
        callOf: () => call(),
        tenantKnownUpfront: true,
      });
      try {
        const document = await procedure.mutation(caller, {
          uploadId: uploadIds[0]!,
          ...documentFields(fields),
          autoClassify: formFlag(fields, 'autoClassify'),
          autoIndex: formFlag(fields, 'autoIndex'),
        });
        set.status = 201;
        return v3Document(document);
      } catch (error) {
        await discardDocuments(controlPlane, caller, uploadIds);
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/documents',
    procedure: 'documents.list',
    tenant: 'header',
    input: {
      query: {
        type: ListDocumentsInputSchema.shape.type,
        tags: param(UploadFormSchema.shape.tags, { description: 'Comma-separated: documents holding every one of them' }),
        status: ListDocumentsInputSchema.shape.status,
        indexed: ListDocumentsInputSchema.shape.indexed,
        limit: ListDocumentsInputSchema.shape.limit,
        offset: ListDocumentsInputSchema.shape.offset,
      },
    },
    output: { 200: { description: 'A page of documents, newest first', schema: V3DocumentPageSchema } },
    docs: { operationId: 'listDocuments', summary: 'List documents', tag: 'Documents' },
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const indexed = queryValue(params, 'indexed');
      const tags = queryValue(params, 'tags');
      const input = {
        type: queryValue(params, 'type'),
        tags: tags === undefined ? undefined : tags.split(',').map((tag) => tag.trim()).filter(Boolean),
        status: untrustedQueryValue(params, 'status'),
        indexed: indexed === 'true' ? true : indexed === 'false' ? false : untrusted(indexed),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
      };
      const filter = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
      const page = await procedure.query(call(), filter);
      const offset = Number(filter.offset ?? 0);
      return { data: page.items.map(v3Document), total: page.total, hasMore: offset + page.items.length < page.total };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/documents/search',
    procedure: 'documents.search',
    tenant: 'header',
    input: { body: { schema: SearchDocumentsInputSchema, description: '`minScore` is on the 0..1 scale of `score`' } },
    output: { 200: { description: 'Matching chunks, best first', schema: DocumentSearchResultsSchema } },
    docs: { operationId: 'searchDocuments', summary: 'Search indexed documents', tag: 'Documents', errors: [502] },
    sample: { body: { query: 'route case' } },
    handler: async ({ body, call, procedure }) => procedure.query(call(), jsonObjectBody(body)),
  }),
  defineRoute({
    method: 'GET',
    path: '/documents/search',
    procedure: 'documents.search',
    tenant: 'header',
    input: { query: SearchDocumentsInputSchema.shape },
    output: { 200: { description: 'Matching chunks, best first', schema: DocumentSearchResultsSchema } },
    docs: { operationId: 'searchDocumentsByQuery', summary: 'Search indexed documents (query string)', tag: 'Documents', errors: [502] },
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const limit = queryValue(params, 'limit');
      const minScore = queryValue(params, 'minScore');
      const number = (value: string | undefined) => (value === undefined ? undefined : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : untrusted(value));
      const input = { query: queryValue(params, 'query'), limit: number(limit), minScore: number(minScore), type: queryValue(params, 'type') };
      return procedure.query(call(), untrusted(Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/documents/:id',
    procedure: 'documents.get',
    tenant: 'header',
    input: { path: DocumentRefSchema.shape },
    output: { 200: { description: 'The document', schema: V3DocumentSchema } },
    docs: { operationId: 'getDocument', summary: 'Get a document, with its classification', tag: 'Documents' },
    sample: { params: { id: NIL_ID } },
    handler: async ({ params, call, procedure }) => v3Document(await procedure.query(call(), { id: params.id })),
  }),
  defineRoute({
    method: 'GET',
    path: '/documents/:id/file',
    procedure: 'documents.readFile',
    tenant: 'header',
    input: { path: DocumentRefSchema.shape },
    output: { 200: { description: 'The file, with its media type, size and name (Content-Disposition)', binary: true } },
    docs: { operationId: 'downloadDocument', summary: "Download a document's file (its `url`)", tag: 'Documents' },
    sample: { params: { id: NIL_ID } },
    handler: async ({ request, params, call, procedure }) => fileResponse(procedure.subscription(call(), { id: params.id }, { signal: request.signal })),
  }),
  defineRoute({
    method: 'POST',
    path: '/documents/:id/classify',
    procedure: 'documents.classify',
    tenant: 'header',
    input: { path: DocumentRefSchema.shape },
    output: { 200: { description: 'Its category, subcategory, confidence and the fields read from it', schema: ClassificationSchema } },
    docs: { operationId: 'classifyDocument', summary: 'Classify a document', tag: 'Documents' },
    sample: { params: { id: NIL_ID } },
    handler: async ({ params, call, procedure }) => procedure.mutation(call(), { id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/documents/:id/index',
    procedure: 'documents.index',
    tenant: 'header',
    input: { path: DocumentRefSchema.shape, body: { schema: ChunkingOptionsSchema, required: false } },
    output: {
      200: { description: 'The job finished: `indexed` with the chunk count, or `failed` with the reason', schema: IndexOutcomeSchema },
      202: { description: 'The job still runs (`processing`)', schema: IndexOutcomeSchema },
    },
    docs: {
      operationId: 'indexDocument',
      summary: 'Index a document for search',
      tag: 'Documents',
      description: 'Runs an indexing job (chunks in tokens: `chunkSize` 100-4000, default 800; `chunkOverlap` at most half of it, default 400) and waits up to 25 s for it. Re-indexing replaces the chunks.',
      errors: [409],
    },
    sample: { params: { id: NIL_ID }, body: {} },
    handler: async ({ params, body, set, call, procedure }) => {
      const outcome = await procedure.mutation(call(), bodyWithPath(optionalObject(body), { id: params.id }));
      set.status = outcome.status === 'processing' ? 202 : 200;
      return outcome;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/documents/:id',
    procedure: 'documents.remove',
    tenant: 'header',
    input: { path: DocumentRefSchema.shape },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteDocument', summary: 'Delete a document, its file, chunks and vectors', tag: 'Documents' },
    sample: { params: { id: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(), { id: params.id });
      set.status = 204;
    },
  }),
];
