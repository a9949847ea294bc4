import { Command, Option } from '@commander-js/extra-typings';
import { csv, formatOption, intOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderJson } from './_render.ts';

const MODES = ['fulltext', 'hybrid', 'vector'] as const;

export const command = withMeta(
  new Command('search')
    .description("Search the tenant's resources by text")
    .argument('<query>', 'the text to search for')
    .addOption(tenantIdOption())
    .option('--types <csv>', 'comma-separated object types (default: all)')
    .addOption(new Option('--mode <mode>', 'ranking').choices(MODES).default('hybrid'))
    .option('--hybrid', 'same as --mode hybrid')
    .option('--vector', 'same as --mode vector')
    .option('--fulltext', 'same as --mode fulltext')
    .addOption(intOption('--limit <n>', 'results at most', 10))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (query, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const mode = options.fulltext ? 'fulltext' : options.vector ? 'vector' : options.hybrid ? 'hybrid' : options.mode;
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const result = await ctx.out.spin('Searching', () => resources.search(tenantId, { query, types: csv(options.types), mode, limit: options.limit }));
      ctx.out.data(result, renderJson);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/search'] },
);
