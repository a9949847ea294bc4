import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import { renderChanges } from './_render.ts';

export const command = withMeta(
  new Command('diff')
    .description("Compare the project's object types with the tenant's")
    .option('--tenant-key <key>', 'tenant slug')
    .option('--tenant-id <id>', 'tenant id (default: the active tenant)')
    .action(async (options, cmd) => {
      const { createObjectTypesService, loadObjectTypes, validateObjectTypes } = await import('../../services/object-types.service.ts');
      const ctx = contextOf(cmd);
      const { types } = await loadObjectTypes();
      const problems = validateObjectTypes(types);
      if (problems.length) throw new CliError('E301', { details: problems.join('; ') });
      const service = createObjectTypesService(await ctx.api());
      const plan = await ctx.out.spin('Comparing object types', () => service.diff(types, options.tenantId ?? options.tenantKey));
      ctx.out.data(plan, renderChanges);
    }),
  { calls: ['GET /v4/data/resources/object-types'], plainText: true },
);
