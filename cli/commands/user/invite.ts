import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderRecord } from '../../output.ts';

export const command = withMeta(
  new Command('invite')
    .description('Invite a platform user (found by e-mail) to a tenant; they join with svc user provision-me')
    .requiredOption('--email <email>', "the user's e-mail address")
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createUsersService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const users = createUsersService(await ctx.api());
      const user = await ctx.out.spin(`Looking up ${options.email}`, () => users.findByEmail(options.email));
      const membership = await ctx.out.spin(`Inviting ${user.email}`, () => users.provision(tenantId, user.id));
      ctx.out.success(
        membership.status === 'invited'
          ? `${user.email} is invited to ${tenantId}: they join with svc user provision-me --tenant ${tenantId}${membership.expiresAt ? ` before ${membership.expiresAt}` : ''}`
          : `${user.email} is a member of ${tenantId}`,
      );
      ctx.out.data(membership, renderRecord);
    }),
  { calls: ['GET /v4/platform/users/by-email', 'POST /v4/platform/tenants/{tenantId}/users/{oid}/provision'] },
);
