import { Command } from '@commander-js/extra-typings';
import { formatOption, intOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderApps } from './_render.ts';

export const command = withMeta(
  new Command('list')
    .description('List the apps (vertical enrollments) of the company tenant, newest first')
    .addOption(tenantIdOption())
    .addOption(intOption('--limit <n>', 'apps at most (the platform allows up to 100)', 50))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createVerticalsService } = await import('../../services/verticals.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const verticals = createVerticalsService(await ctx.api());
      const page = await ctx.out.spin('Listing apps', () => verticals.list(tenantId, options.limit));
      ctx.out.data(page, renderApps);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/tenant-vertical-enrollment'] },
);
