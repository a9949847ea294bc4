import { octetInputParser } from '@trpc/server/http';
import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure, uploadMetaOf } from '../trpc/procedures.ts';
import { FileRefSchema, FileUploadMetaSchema } from './resource-files.ts';
import {
  BatchCreateInputSchema,
  BatchDeletedSchema,
  BatchDeleteInputSchema,
  BatchResourcesSchema,
  BatchUpdateInputSchema,
  IdempotentCreateInputSchema,
  ResourceHistoryInputSchema,
  ResourceHistoryPageSchema,
  DeleteResourceInputSchema,
  ListResourcePageInputSchema,
  ListResourcesInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceListPageSchema,
  ReplaceResourceInputSchema,
  ResourcePageSchema,
  ResourceRefSchema,
  ResourceSchema,
  UpdateResourceInputSchema,
} from './resources.schema.ts';
import { ActionResultSchema, ApplyActionInputSchema } from './resource-actions.schema.ts';
import { AggregateResourcesInputSchema, AggregateResultSchema, QueryResourcesInputSchema, ResourceQueryPageSchema } from './resource-queries.schema.ts';
import type { ResourceFilesService } from './resource-files.ts';
import type { ResourcesService } from './resources.service.ts';

/** What these procedures call of the resource files service: the API's context holds these functions and no others (app/services.ts). */
export const RESOURCE_FILES_API = ['open', 'remove', 'upload'] as const satisfies readonly (keyof ResourceFilesService)[];
/** What these procedures call of the resources service: the API's context holds these functions and no others (app/services.ts). */
export const RESOURCES_API = ['aggregate', 'applyAction', 'batchCreate', 'batchDelete', 'batchUpdate', 'create', 'get', 'history', 'list', 'listPage', 'query', 'remove', 'replace', 'replaceAtVersion', 'update'] as const satisfies readonly (keyof ResourcesService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    resourceFiles: Pick<ResourceFilesService, (typeof RESOURCE_FILES_API)[number]>;
    resources: Pick<ResourcesService, (typeof RESOURCES_API)[number]>;
  }
}

export const resourcesRouter = t.router({
  list: tenantProcedure('resources.read')
    .input(ListResourcesInputSchema)
    .output(ResourcePageSchema)
    .query(({ ctx, input }) => ctx.services.resources.list(ctx.actor, input)),
  listPage: tenantProcedure('resources.read')
    .input(ListResourcePageInputSchema)
    .output(ResourceListPageSchema)
    .query(({ ctx, input }) => ctx.services.resources.listPage(ctx.actor, input)),
  get: tenantProcedure('resources.read')
    .input(ResourceRefSchema)
    .output(ResourceSchema)
    .query(({ ctx, input }) => ctx.services.resources.get(ctx.actor, input.type, input.id)),
  create: tenantProcedure('resources.create')
    .input(IdempotentCreateInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.create(ctx.actor, input.type, input.data, input.idempotencyKey)),
  replace: tenantProcedure('resources.update')
    .input(ReplaceResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.replace(ctx.actor, input.type, input.id, input.data, input.version)),
  replaceAtVersion: tenantProcedure('resources.update')
    .input(ReplaceAtVersionInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.replaceAtVersion(ctx.actor, input)),
  update: tenantProcedure('resources.update')
    .input(UpdateResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.update(ctx.actor, input.type, input.id, input.patch, input.version)),
  delete: tenantProcedure('resources.delete')
    .input(DeleteResourceInputSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.resources.remove(ctx.actor, input.type, input.id, input.ifMatch)),
  uploadFile: tenantProcedure('resources.update')
    .use(uploadMetaOf(FileUploadMetaSchema))
    .input(octetInputParser)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resourceFiles.upload(ctx.actor, ctx.uploadMeta, input)),
  /** The file's description first, then its bytes in base64 pieces (so that they travel over the HTTP link too). */
  readFile: tenantProcedure('resources.read')
    .input(FileRefSchema)
    .subscription(async function* ({ ctx, input }) {
      const { file, bytes } = await ctx.services.resourceFiles.open(ctx.actor, input);
      yield { file };
      for await (const chunk of bytes) yield { base64: Buffer.from(chunk).toString('base64') };
    }),
  deleteFile: tenantProcedure('resources.update')
    .input(FileRefSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resourceFiles.remove(ctx.actor, input)),

  // History and batches (resource-history.ts, resource-batches.ts).
  history: tenantProcedure('resources.read')
    .input(ResourceHistoryInputSchema)
    .output(ResourceHistoryPageSchema)
    .query(({ ctx, input }) => ctx.services.resources.history(ctx.actor, input)),
  batchCreate: tenantProcedure('resources.create')
    .input(BatchCreateInputSchema)
    .output(BatchResourcesSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.batchCreate(ctx.actor, input)),
  batchUpdate: tenantProcedure('resources.update')
    .input(BatchUpdateInputSchema)
    .output(BatchResourcesSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.batchUpdate(ctx.actor, input)),
  batchDelete: tenantProcedure('resources.delete')
    .input(BatchDeleteInputSchema)
    .output(BatchDeletedSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.batchDelete(ctx.actor, input)),
  query: tenantProcedure('resources.read')
    .input(QueryResourcesInputSchema)
    .output(ResourceQueryPageSchema)
    .query(({ ctx, input }) => ctx.services.resources.query(ctx.actor, input)),
  aggregate: tenantProcedure('resources.read')
    .input(AggregateResourcesInputSchema)
    .output(AggregateResultSchema)
    .query(({ ctx, input }) => ctx.services.resources.aggregate(ctx.actor, input)),
  applyAction: tenantProcedure('resources.update')
    .input(ApplyActionInputSchema)
    .output(ActionResultSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.applyAction(ctx.actor, input)),
});
