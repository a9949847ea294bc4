import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonInput, wholeNumber, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import { renderResource } from './_render.ts';


export const command = withMeta(
  new Command('update')
    .description('Replace the data of a resource at a version (optimistic locking: a stale version is E205)')
    .argument('<type>', 'object type key or PascalCase name')
    .argument('<id>', 'resource id')
    .addOption(tenantIdOption())
    .option('--data <json>', 'the new data, as a JSON object')
    .option('--file <path>', 'read the data from a JSON file (- for stdin)')
    .option('--version <number>', 'the version being replaced (read from the platform when omitted)', wholeNumber('--version'))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (type, id, options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const data = await jsonInput(options);
      if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalidInput('the data must be a JSON object');
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const updated = await ctx.out.spin(`Updating ${type} ${id}`, () => resources.update(tenantId, type, id, data, options.version));
      ctx.out.data(updated, renderResource);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/{objectType}/{id}', 'PUT /v4/data/resources/{tenantId}/{objectType}/{id}'] },
);
