import { octetInputParser } from '@trpc/server/http';
import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure, withUploadMeta } from '../trpc/procedures.ts';
import {
  ClassificationSchema,
  CreateDocumentInputSchema,
  DocumentJobSchema,
  DocumentPageSchema,
  DocumentRefSchema,
  DocumentSchema,
  DocumentSearchResultsSchema,
  IndexDocumentInputSchema,
  IndexOutcomeSchema,
  JobRefSchema,
  ListDocumentsInputSchema,
  SearchDocumentsInputSchema,
  StagedUploadSchema,
  SubmitIndexJobInputSchema,
  UploadPolicySchema,
  UploadRefSchema,
} from './documents.schema.ts';
import type { DocumentsService } from './documents.service.ts';

/** What these procedures call of the documents service: the API's context holds these functions and no others (app/services.ts). */
export const DOCUMENTS_API = ['classify', 'create', 'discard', 'get', 'index', 'job', 'list', 'open', 'remove', 'search', 'stage', 'submitIndexJob', 'uploadPolicy'] as const satisfies readonly (keyof DocumentsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    documents: Pick<DocumentsService, (typeof DOCUMENTS_API)[number]>;
  }
}

export const documentsRouter = t.router({
  uploadPolicy: tenantProcedure('documents.upload')
    .input(z.object({}).strict())
    .output(UploadPolicySchema)
    .query(({ ctx }) => ctx.services.documents.uploadPolicy(ctx.actor)),
  stage: tenantProcedure('documents.upload')
    .use(withUploadMeta)
    .input(octetInputParser)
    .output(StagedUploadSchema)
    .mutation(({ ctx, input }) => ctx.services.documents.stage(ctx.actor, ctx.uploadMeta, input)),
  discard: tenantProcedure('documents.upload')
    .input(UploadRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.documents.discard(ctx.actor, input.uploadId)),
  create: tenantProcedure('documents.upload')
    .input(CreateDocumentInputSchema)
    .output(DocumentSchema)
    .mutation(({ ctx, input }) => ctx.services.documents.create(ctx.actor, input)),
  list: tenantProcedure('documents.read')
    .input(ListDocumentsInputSchema)
    .output(DocumentPageSchema)
    .query(({ ctx, input }) => ctx.services.documents.list(ctx.actor, input)),
  get: tenantProcedure('documents.read')
    .input(DocumentRefSchema)
    .output(DocumentSchema)
    .query(({ ctx, input }) => ctx.services.documents.get(ctx.actor, input.id)),
  /** The file's description first, then its bytes in base64 pieces (so that they travel over the HTTP link too). */
  readFile: tenantProcedure('documents.read')
    .input(DocumentRefSchema)
    .subscription(async function* ({ ctx, input }) {
      const { file, bytes } = await ctx.services.documents.open(ctx.actor, input.id);
      yield { file };
      for await (const chunk of bytes) yield { base64: Buffer.from(chunk).toString('base64') };
    }),
  classify: tenantProcedure('documents.upload')
    .input(DocumentRefSchema)
    .output(ClassificationSchema)
    .mutation(({ ctx, input }) => ctx.services.documents.classify(ctx.actor, input.id)),
  index: tenantProcedure('documents.upload')
    .input(IndexDocumentInputSchema)
    .output(IndexOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.documents.index(ctx.actor, input)),
  submitIndexJob: tenantProcedure('documents.upload')
    .input(SubmitIndexJobInputSchema)
    .output(DocumentJobSchema)
    .mutation(({ ctx, input }) => ctx.services.documents.submitIndexJob(ctx.actor, input)),
  job: tenantProcedure('documents.read')
    .input(JobRefSchema)
    .output(DocumentJobSchema)
    .query(({ ctx, input }) => ctx.services.documents.job(ctx.actor, input.jobId)),
  search: tenantProcedure('documents.read')
    .input(SearchDocumentsInputSchema)
    .output(DocumentSearchResultsSchema)
    .query(({ ctx, input }) => ctx.services.documents.search(ctx.actor, input)),
  remove: tenantProcedure('documents.upload')
    .input(DocumentRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.documents.remove(ctx.actor, input.id)),
});
