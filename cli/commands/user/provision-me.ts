import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderRecord } from '../../output.ts';

export const command = withMeta(
  new Command('provision-me')
    .description('Join a tenant: accept its invitation, or join as its e-mail domains allow')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createUsersService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const users = createUsersService(await ctx.api());
      const answer = await ctx.out.spin('Provisioning', () => users.provisionMe(tenantId));
      ctx.out.data(answer, renderRecord);
    }),
  { calls: ['POST /v4/identity/me/provision'] },
);
