import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';

export const command = withMeta(
  new Command('delete')
    .description('Delete a resource (asks first unless --force)')
    .argument('<type>', 'object type key or PascalCase name')
    .argument('<id>', 'resource id')
    .addOption(tenantIdOption())
    .option('--force', 'delete without asking')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, id, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      if (!options.force) await ctx.out.confirm(`Delete ${type} ${id}?`, '--force');
      const resources = createResourcesService(await ctx.api());
      const deleted = await ctx.out.spin(`Deleting ${type} ${id}`, () => resources.delete(tenantId, type, id));
      ctx.out.data(deleted, (d) => `Deleted ${d.type} ${d.id}`);
    }),
  { calls: ['DELETE /v4/data/resources/{tenantId}/{objectType}/{id}'], destructive: true },
);
