import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { readTenantContext, writeTenantContext } from '../../config.ts';
import { contextOf } from '../../context.ts';

export const command = withMeta(
  new Command('delete')
    .description('Delete a tenant (asks first unless --force); the active tenant is cleared if it was this one')
    .argument('<id>', 'tenant id or slug')
    .option('--force', 'delete without asking')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (id, options, cmd) => {
      const { createTenantsService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      if (!options.force) await ctx.out.confirm(`Delete tenant ${id}? Its members lose access to it.`, '--force');
      const tenants = createTenantsService(await ctx.api());
      await ctx.out.spin(`Deleting ${id}`, () => tenants.delete(id));
      const active = await readTenantContext(ctx.profile);
      if (active && (active.tenantId === id || active.tenantSlug === id)) await writeTenantContext(ctx.profile, undefined);
      ctx.out.data({ id, deleted: true }, (d) => `Deleted tenant ${d.id}`);
    }),
  { calls: ['POST /v4/platform/tenants/{tenantId}/delete'], destructive: true },
);
