import { Command } from '@commander-js/extra-typings';
import { formatOption, intOption, jsonOption, parseJson, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderPage } from './_render.ts';

export const command = withMeta(
  new Command('list')
    .description('List resources of a type, a page at a time')
    .argument('<type>', 'object type key or PascalCase name')
    .addOption(tenantIdOption())
    .addOption(intOption('--page <n>', 'page number (1-based)', 1))
    .addOption(intOption('--limit <n>', 'resources per page', 20))
    .option('--sort <fields>', 'comma-separated fields; prefix - for descending', '-created_at')
    .option('--where <json>', 'filter, as the structured where JSON')
    .option('--cursor <cursor>', 'opaque cursor of the next page (instead of --page)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const where = options.where === undefined ? undefined : parseJson(options.where, '--where');
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const page = await ctx.out.spin(`Listing ${type}`, () =>
        resources.list(tenantId, type, { page: options.page, limit: options.limit, sort: options.sort, where, cursor: options.cursor }),
      );
      ctx.out.data(page, renderPage);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/{objectType}'] },
);
