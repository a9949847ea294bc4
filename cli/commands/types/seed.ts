import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import { renderChanges } from './_render.ts';

export const command = withMeta(
  new Command('seed')
    .description("Create and update the tenant's object types to match the project's, then check that they converged")
    .option('--env <environment>', 'environment label reported with the result', 'dev')
    .option('--tenant-key <key>', 'tenant slug')
    .option('--tenant-id <id>', 'tenant id (default: the active tenant)')
    .option('--dry-run', 'only show what would change')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createObjectTypesService, loadObjectTypes, validateObjectTypes } = await import('../../services/object-types.service.ts');
      const ctx = contextOf(cmd);
      const { types } = await loadObjectTypes();
      const problems = validateObjectTypes(types);
      if (problems.length) throw new CliError('E301', { details: problems.join('; ') });
      const service = createObjectTypesService(await ctx.api());
      const result = await ctx.out.spin('Seeding object types', () => service.seed(types, { tenant: options.tenantId ?? options.tenantKey, dryRun: options.dryRun === true }));
      ctx.out.data({ env: options.env, ...result }, renderChanges);
    }),
  {
    calls: ['GET /v4/data/resources/object-types', 'POST /v4/data/resources/object-types', 'PATCH /v4/data/resources/object-types/{objectTypeId}', 'GET /v4/data/resources/object-types'],
  },
);
