import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderResource } from './_render.ts';

export const command = withMeta(
  new Command('get')
    .description('Show one resource')
    .argument('<type>', 'object type key or PascalCase name')
    .argument('<id>', 'resource id')
    .addOption(tenantIdOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, id, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      ctx.out.data(await ctx.out.spin(`Reading ${type} ${id}`, () => resources.get(tenantId, type, id)), renderResource);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/{objectType}/{id}'] },
);
