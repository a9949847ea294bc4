import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderTenant } from './_render.ts';

export const command = withMeta(
  new Command('info')
    .description('Show one of your tenants')
    .argument('<id>', 'tenant id or slug')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (id, options, cmd) => {
      const { createTenantsService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenants = createTenantsService(await ctx.api());
      ctx.out.data(await ctx.out.spin('Reading tenants', () => tenants.find(id)), renderTenant);
    }),
  { calls: ['GET /v4/identity/tenants'] },
);
