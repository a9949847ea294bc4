import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  ConfigAuditPageSchema,
  ConfigEntryRefSchema,
  ConfigSetSchema,
  ConfigSetSummarySchema,
  ConfigWriteOutcomeSchema,
  GetConfigInputSchema,
  ListConfigAuditInputSchema,
  PutConfigEntryInputSchema,
  PutConfigEntryOutcomeSchema,
  WriteConfigInputSchema,
} from './config-store.schema.ts';
import type { ConfigStoreService } from './config-store.service.ts';

/** What these procedures call of the configuration store service: the API's context holds these functions and no others (app/services.ts). */
export const CONFIG_STORE_API = ['audit', 'get', 'listSets', 'put', 'remove', 'write'] as const satisfies readonly (keyof ConfigStoreService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    configStore: Pick<ConfigStoreService, (typeof CONFIG_STORE_API)[number]>;
  }
}

/**
 * The configuration store of the tenant's apps. Members read entries (`resources.read`), without
 * secrets' values; tenant administrators (`tenants.manage`) write, read secrets' values when they
 * ask for them, and read the audit.
 */
export const configStoreRouter = t.router({
  listSets: tenantProcedure('resources.read')
    .input(z.object({}).strict())
    .output(z.array(ConfigSetSummarySchema))
    .query(({ ctx }) => ctx.services.configStore.listSets(ctx.actor)),
  get: tenantProcedure('resources.read')
    .input(GetConfigInputSchema)
    .output(ConfigSetSchema)
    .query(({ ctx, input }) => ctx.services.configStore.get(ctx.actor, input)),
  put: tenantProcedure('tenants.manage')
    .input(PutConfigEntryInputSchema)
    .output(PutConfigEntryOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.configStore.put(ctx.actor, input)),
  write: tenantProcedure('tenants.manage')
    .input(WriteConfigInputSchema)
    .output(ConfigWriteOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.configStore.write(ctx.actor, input)),
  remove: tenantProcedure('tenants.manage')
    .input(ConfigEntryRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.configStore.remove(ctx.actor, input)),
  audit: tenantProcedure('tenants.manage')
    .input(ListConfigAuditInputSchema)
    .output(ConfigAuditPageSchema)
    .query(({ ctx, input }) => ctx.services.configStore.audit(ctx.actor, input)),
});
