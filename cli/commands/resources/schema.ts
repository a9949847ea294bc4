import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { brief, table } from '../../output.ts';

export const command = withMeta(
  new Command('schema')
    .description('List the object types published to the tenant')
    .addOption(tenantIdOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createResourcesService } = await import('../../services/resources.service.ts');
      const ctx = contextOf(cmd);
      const resources = createResourcesService(await ctx.api());
      const tenantId = await ctx.tenantId(options.tenantId);
      const schema = await ctx.out.spin('Reading the schema', () => resources.schema(tenantId));
      ctx.out.data(schema, (s, style) =>
        table(['KEY', 'NAME', 'VERSION', 'FIELDS'], s.data.map((t) => [String(t['key']), String(t['name']), String(t['version'] ?? ''), brief(Object.keys((t['schema'] as { properties?: object })?.properties ?? {}).join(', '))]), style),
      );
    }),
  { calls: ['GET /v4/data/resources/schema/{tenantId}'] },
);
