import { octetInputParser } from '@trpc/server/http';
import { t } from '../trpc/init.ts';
import { tenantProcedure, withUploadMeta } from '../trpc/procedures.ts';
import { UploadSchema } from './uploads.schema.ts';
import type { UploadsService } from './uploads.service.ts';

/** What these procedures call of the uploads service: the API's context holds these functions and no others (app/services.ts). */
export const UPLOADS_API = ['put'] as const satisfies readonly (keyof UploadsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    uploads: Pick<UploadsService, (typeof UPLOADS_API)[number]>;
  }
}

export const uploadsRouter = t.router({
  put: tenantProcedure('documents.upload')
    .use(withUploadMeta)
    .input(octetInputParser)
    .output(UploadSchema)
    .mutation(({ ctx, input }) => ctx.services.uploads.put(ctx.actor, ctx.uploadMeta, input)),
});
