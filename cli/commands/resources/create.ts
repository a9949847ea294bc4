import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonInput, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import { renderResource } from './_render.ts';

export const command = withMeta(
  new Command('create')
    .description("Create a resource from its data (the JSON object of the type's fields)")
    .argument('<type>', 'object type key or PascalCase name')
    .addOption(tenantIdOption())
    .option('--data <json>', 'the data, as a JSON object')
    .option('--file <path>', 'read the data from a JSON file (- for stdin)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const data = await jsonInput(options);
      if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalidInput('the data must be a JSON object');
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const created = await ctx.out.spin(`Creating ${type}`, () => resources.create(tenantId, type, data));
      ctx.out.data(created, renderResource);
    }),
  { calls: ['POST /v4/data/resources/{tenantId}/{objectType}'] },
);
