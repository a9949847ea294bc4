import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { PROVISION_BACKENDS } from '../../services/storage.constants.ts';
import { renderChanges } from '../resources/_storage-render.ts';

export const command = withMeta(
  new Command('storage')
    .description("Provision the tenant's storage backends (idempotent); --dry-run lists the changes only")
    .addOption(tenantIdOption())
    .addOption(new Option('--backend <backend>', 'which backend').choices(PROVISION_BACKENDS).default('all'))
    .option('--dry-run', 'list the changes, make none')
    .option('--rebuild-search', 'rebuild the search projection from the stored resources')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createStorageService } = await import('../../services/storage.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const storage = createStorageService(await ctx.api());
      const input = { backend: options.backend, dryRun: options.dryRun === true, rebuildSearch: options.rebuildSearch === true };
      const answer = await ctx.out.spin('Provisioning storage', () => storage.provision(tenantId, input));
      ctx.out.data(answer, (a, style) => `${renderChanges(a, style)}${a['state'] ? `\nstate: ${String(a['state'])}` : ''}`);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/storage/provision'] },
);
