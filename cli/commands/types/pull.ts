import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { GENERATED_FILE } from '../../services/object-types.constants.ts';

export const command = withMeta(
  new Command('pull')
    .description("Write the tenant's object types as TypeScript (definitions and an interface of each type's data)")
    .option('--tenant-id <id>', 'tenant id or slug (default: the active tenant)')
    .option('--output <path>', 'the file to write', GENERATED_FILE)
    .action(async (options, cmd) => {
      const { createObjectTypesService } = await import('../../services/object-types.service.ts');
      const ctx = contextOf(cmd);
      const service = createObjectTypesService(await ctx.api());
      const pulled = await ctx.out.spin('Pulling object types', () => service.pull(options.output, options.tenantId));
      ctx.out.success(`Wrote ${pulled.types.length} object types to ${pulled.output}`);
    }),
  { calls: ['GET /v4/data/resources/object-types'], plainText: true },
);
