import { Command } from '@commander-js/extra-typings';
import { csv, formatOption, intOption, jsonOption, parseJson, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderAggregate } from './_render.ts';

export const command = withMeta(
  new Command('aggregate')
    .description('Summarise resources of a type on the server, grouped by fields')
    .argument('<type>', 'object type key or PascalCase name')
    .addOption(tenantIdOption())
    .requiredOption('--group-by <csv>', 'comma-separated fields to group by')
    .requiredOption('--metrics <json>', 'metrics to compute, as JSON')
    .option('--where <json>', 'filter, as the structured where JSON')
    .addOption(intOption('--limit <n>', 'summary rows at most', 1000))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const metrics = parseJson(options.metrics, '--metrics');
      const where = options.where === undefined ? undefined : parseJson(options.where, '--where');
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const result = await ctx.out.spin(`Aggregating ${type}`, () =>
        resources.aggregate(tenantId, type, { group_by: csv(options.groupBy) ?? [], metrics, where, limit: options.limit }),
      );
      ctx.out.data(result, renderAggregate);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/{objectType}/aggregate'] },
);
