import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { STORAGE_BACKENDS } from '../../services/storage.constants.ts';
import { renderChanges } from './_storage-render.ts';

export const command = withMeta(
  new Command('sync-schema')
    .description('Bring storage in line with the object types (indexes they declare); --dry-run lists the changes only')
    .addOption(tenantIdOption())
    .addOption(new Option('--backend <backend>', 'one backend (default: all)').choices(STORAGE_BACKENDS))
    .option('--dry-run', 'list the changes, make none')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createStorageService } = await import('../../services/storage.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const storage = createStorageService(await ctx.api());
      const answer = await ctx.out.spin('Syncing the schema', () => storage.syncSchema(tenantId, { backend: options.backend, dryRun: options.dryRun === true }));
      ctx.out.data(answer, renderChanges);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/storage/sync-schema'] },
);
