import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { DoctorReportSchema, ProvisionInputSchema, ProvisionOutcomeSchema, StorageStatusSchema, SyncSchemaInputSchema, SyncSchemaOutcomeSchema } from './storage.schema.ts';
import type { StorageService } from './storage.service.ts';

export const STORAGE_API = ['doctor', 'provision', 'status', 'syncSchema'] as const satisfies readonly (keyof StorageService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    storage: Pick<StorageService, (typeof STORAGE_API)[number]>;
  }
}

export const storageRouter = t.router({
  status: tenantProcedure('resources.read')
    .input(z.object({}).optional())
    .output(StorageStatusSchema)
    .query(({ ctx }) => ctx.services.storage.status(ctx.actor)),
  doctor: tenantProcedure('tenants.manage')
    .input(z.object({}).optional())
    .output(DoctorReportSchema)
    .query(({ ctx }) => ctx.services.storage.doctor(ctx.actor)),
  provision: tenantProcedure('tenants.manage')
    .input(ProvisionInputSchema)
    .output(ProvisionOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.storage.provision(ctx.actor, input)),
  syncSchema: tenantProcedure('tenants.manage')
    .input(SyncSchemaInputSchema)
    .output(SyncSchemaOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.storage.syncSchema(ctx.actor, input)),
});
