import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../../command.ts';
import { contextOf } from '../../../context.ts';
import { renderStatus } from '../_storage-render.ts';

export const command = withMeta(
  new Command('status')
    .description("The tenant's storage: each backend's state and where its data lives")
    .addOption(tenantIdOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createStorageService } = await import('../../../services/storage.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const storage = createStorageService(await ctx.api());
      ctx.out.data(await ctx.out.spin('Reading storage', () => storage.status(tenantId)), renderStatus);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/storage'] },
);
