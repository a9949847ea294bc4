import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderTenants } from './_render.ts';

export const command = withMeta(
  new Command('list')
    .description('List your tenants (those you administer, unless --all)')
    .option('--parent <id>', "only this tenant's children (id or slug)")
    .option('--all', 'include tenants where you hold other roles than tenant-admin')
    .option('--debug', 'print each API call on stderr')
    .option('--raw-user', 'print the memberships exactly as the API returned them, unfiltered')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createTenantsService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenants = createTenantsService(await ctx.api());
      const list = await ctx.out.spin('Listing tenants', () => tenants.list({ all: options.all, parent: options.parent, raw: options.rawUser }));
      ctx.out.data(list, renderTenants);
    }),
  { calls: ['GET /v4/identity/tenants'] },
);
