import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { configSetOf, envOption, labelOption } from './_set.ts';
import { renderPush } from './_render.ts';

export const command = withMeta(
  new Command('push')
    .description(
      "Store .env.local's entries (or one with --key) in the platform's configuration store of the active tenant, all or none; tenant administrators only. " +
        'An entry marked "# svc:secret" or named like a secret is stored as a secret (sealed at rest, masked when read); any other keeps the flag the store has (not a secret when new). ' +
        'Keys of the store that .env.local lacks are kept.',
    )
    .addOption(labelOption())
    .option('--key <key>', 'push only this key')
    .addOption(envOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createEnvService } = await import('../../services/env.service.ts');
      const ctx = contextOf(cmd);
      const set = await configSetOf(ctx, options);
      const api = await ctx.api();
      const result = await ctx.out.spin(`Pushing to ${set.label}/${set.environment}`, () => createEnvService().push(api, set, options.key));
      ctx.out.data(result, renderPush);
    }),
  { calls: ['PATCH /v4/platform/config/{tenantId}/{label}/{environment}'] },
);
