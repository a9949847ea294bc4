import { Elysia } from 'elysia';
import { z } from 'zod';
import { DocumentSchema, untrusted, type ControlPlane, type Document } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { V3_BASE } from '../bases.ts';
import { discardDocuments, documentFields, formFlag, receiveDocuments } from '../document-uploads.ts';
import { fileResponse } from '../file-download.ts';
import { bodyWithPath, jsonObjectBody, optionalObject, queryValue, untrustedQueryValue } from '../request-input.ts';

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
export function v3DocumentRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v3-documents' })
    .post(
      '/documents',
      async ({ request, set }) => {
        const { call, fields, uploadIds } = await receiveDocuments(cp, request, {
          headers: set.headers,
          fileField: 'file',
          maxFiles: 1,
          textFields: UPLOAD_FIELDS,
          callOf: () => calls.of(request),
          tenantKnownUpfront: true,
        });
        try {
          const document = await cp.mutation(call, 'documents', 'create', {
            uploadId: uploadIds[0]!,
            ...documentFields(fields),
            autoClassify: formFlag(fields, 'autoClassify'),
            autoIndex: formFlag(fields, 'autoIndex'),
          });
          set.status = 201;
          return v3Document(document);
        } catch (error) {
          await discardDocuments(cp, call, uploadIds);
          throw error;
        }
      },
      // The body is a form streamed to the blob store: Elysia must not read it.
      { parse: 'none' },
    )
    .get('/documents', async ({ request }) => {
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
      const page = await cp.query(calls.of(request), 'documents', 'list', filter);
      const offset = Number(filter.offset ?? 0);
      return { data: page.items.map(v3Document), total: page.total, hasMore: offset + page.items.length < page.total };
    })
    .post('/documents/search', async ({ request, body }) => cp.query(calls.of(request), 'documents', 'search', jsonObjectBody(body)))
    .get('/documents/search', async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const limit = queryValue(params, 'limit');
      const minScore = queryValue(params, 'minScore');
      const number = (value: string | undefined) => (value === undefined ? undefined : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : untrusted(value));
      const input = { query: queryValue(params, 'query'), limit: number(limit), minScore: number(minScore), type: queryValue(params, 'type') };
      return cp.query(calls.of(request), 'documents', 'search', untrusted(Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))));
    })
    .get('/documents/:id', async ({ request, params }) => v3Document(await cp.query(calls.of(request), 'documents', 'get', { id: params.id })))
    .get('/documents/:id/file', async ({ request, params }) =>
      fileResponse(cp.subscription(calls.of(request), 'documents', 'readFile', { id: params.id }, { signal: request.signal })),
    )
    .post('/documents/:id/classify', async ({ request, params }) => cp.mutation(calls.of(request), 'documents', 'classify', { id: params.id }))
    .post('/documents/:id/index', async ({ request, params, body, set }) => {
      const outcome = await cp.mutation(calls.of(request), 'documents', 'index', bodyWithPath(optionalObject(body), { id: params.id }));
      set.status = outcome.status === 'processing' ? 202 : 200;
      return outcome;
    })
    .delete('/documents/:id', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request), 'documents', 'remove', { id: params.id });
      set.status = 204;
    });
}
