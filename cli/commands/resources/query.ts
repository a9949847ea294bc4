import { Command } from '@commander-js/extra-typings';
import { csv, formatOption, intOption, jsonOption, parseJson, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderQuery } from './_render.ts';

export const command = withMeta(
  new Command('query')
    .description('Query resources across several types')
    .addOption(tenantIdOption())
    .requiredOption('--types <csv>', 'comma-separated object types')
    .option('--where <json>', 'filter, as the structured where JSON')
    .addOption(intOption('--limit <n>', 'resources at most', 20))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const where = options.where === undefined ? undefined : parseJson(options.where, '--where');
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const result = await ctx.out.spin('Querying', () => resources.query(tenantId, { types: csv(options.types) ?? [], where, limit: options.limit }));
      ctx.out.data(result, renderQuery);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/query'] },
);
