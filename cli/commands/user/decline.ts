import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';

export const command = withMeta(
  new Command('decline')
    .description('Decline your invitation to a tenant (expired or not); the invitation is deleted')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createUsersService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const users = createUsersService(await ctx.api());
      await ctx.out.spin('Declining', () => users.declineInvitation(tenantId));
      ctx.out.data({ tenantId, declined: true }, (d) => `Declined the invitation to ${d.tenantId}`);
    }),
  { calls: ['POST /v4/identity/me/decline'] },
);
