import { Elysia } from 'elysia';
import { ValidationError, type CallContext, type ControlPlane, type Document } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { discardDocuments, documentFields, receiveDocuments } from '../document-uploads.ts';
import { optionalObject, queryValue, tenantOption } from '../request-input.ts';

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

function checkMode(fields: ReadonlyMap<string, string>, expected: 'full' | 'classification'): void {
  const mode = fields.get('processing_mode') ?? expected;
  if (mode !== expected) throw ValidationError.field('processing_mode', `must be "${expected}" on this route`);
}

/**
 * v4 documents: uploads of several files (`processing_mode=full`: each is classified and indexed
 * by its job), classification of uploaded files (`processing_mode=classification`: answered with
 * each file's classification), a document's record, and indexing jobs (`rag-index`) with their state.
 */
export function v4DocumentRoutes(cp: ControlPlane, calls: RequestCalls) {
  /** Makes documents of the staged files; should one fail, those made are deleted and the rest discarded, so the upload is all or nothing. */
  async function createAll(call: CallContext, uploadIds: string[], make: (uploadId: string) => Promise<Document>): Promise<Document[]> {
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

  const receive = (request: Request, headers: Record<string, string | number>) =>
    receiveDocuments(cp, request, {
      headers,
      fileField: 'files',
      maxFiles: MAX_V4_UPLOAD_FILES,
      textFields: FORM_FIELDS,
      callOf: (fields) => calls.of(request, formTenant(request, fields)),
      tenantKnownUpfront: new URL(request.url).searchParams.has('tenant_id'),
      beforeFiles: ['tenant_id'],
    });

  return new Elysia({ name: 'v4-data-documents' })
    .post(
      '/data/documents/upload',
      async ({ request, set }) => {
        const { call, fields, uploadIds } = await receive(request, set.headers);
        try {
          checkMode(fields, 'full');
        } catch (error) {
          await discardDocuments(cp, call, uploadIds);
          throw error;
        }
        const documents = await createAll(call, uploadIds, (uploadId) =>
          cp.mutation(call, 'documents', 'create', { uploadId, ...documentFields(fields), autoClassify: true, autoIndex: true }),
        );
        set.status = 201;
        return { data: documents };
      },
      { parse: 'none' },
    )
    .post(
      '/data/documents/classify',
      async ({ request, set }) => {
        const { call, fields, uploadIds } = await receive(request, set.headers);
        try {
          checkMode(fields, 'classification');
        } catch (error) {
          await discardDocuments(cp, call, uploadIds);
          throw error;
        }
        const documents = await createAll(call, uploadIds, async (uploadId) => {
          const document = await cp.mutation(call, 'documents', 'create', { uploadId, ...documentFields(fields) });
          try {
            await cp.mutation(call, 'documents', 'classify', { id: document.id });
            return await cp.query(call, 'documents', 'get', { id: document.id });
          } catch (error) {
            await cp.mutation(call, 'documents', 'remove', { id: document.id }).catch(() => undefined);
            throw error;
          }
        });
        set.status = 201;
        return { data: documents };
      },
      { parse: 'none' },
    )
    .get('/data/documents/records/:documentId', ({ request, params }) =>
      cp.query(calls.of(request, queryValue(new URL(request.url).searchParams, 'tenant_id')), 'documents', 'get', { id: params.documentId }),
    )
    .post('/data/documents/rag-index', async ({ request, body, set }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const job = await cp.mutation(calls.of(request, tenantId), 'documents', 'submitIndexJob', optionalObject(rest));
      set.status = 202;
      return job;
    })
    .get('/data/documents/rag-index/:jobId', ({ request, params }) =>
      cp.query(calls.of(request, queryValue(new URL(request.url).searchParams, 'tenant_id')), 'documents', 'job', { jobId: params.jobId }),
    );
}
