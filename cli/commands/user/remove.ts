import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';

export const command = withMeta(
  new Command('remove')
    .description('Remove a user (found by e-mail) from a tenant: their membership, or their invitation (asks first unless --force)')
    .requiredOption('--email <email>', "the user's e-mail address")
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .option('--force', 'remove without asking')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createUsersService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      if (!options.force) await ctx.out.confirm(`Remove ${options.email} from tenant ${tenantId}? They lose access to it.`, '--force');
      const users = createUsersService(await ctx.api());
      const user = await ctx.out.spin(`Looking up ${options.email}`, () => users.findByEmail(options.email));
      await ctx.out.spin(`Removing ${user.email}`, () => users.remove(tenantId, user.id));
      ctx.out.data({ tenantId, userId: user.id, email: user.email, removed: true }, (d) => `Removed ${d.email} from ${d.tenantId}`);
    }),
  { calls: ['GET /v4/platform/users/by-email', 'DELETE /v4/platform/tenants/{tenantId}/users/{oid}'], destructive: true },
);
