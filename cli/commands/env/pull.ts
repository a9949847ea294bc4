import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { configSetOf, envOption, labelOption } from './_set.ts';
import { renderPull } from './_render.ts';

export const command = withMeta(
  new Command('pull')
    .description(
      "Write the app's configuration of an environment from the platform's configuration store (of the active tenant) into .env.local: " +
        'changed values are rewritten where they stand, new keys added at the end, comments and other lines kept. ' +
        'Secrets only with --include-secrets (tenant administrators; the read is audited), each marked "# svc:secret"; without it local values of secrets stay as they are.',
    )
    .addOption(envOption())
    .addOption(labelOption())
    .option('--include-secrets', "write secrets' values too")
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createEnvService } = await import('../../services/env.service.ts');
      const ctx = contextOf(cmd);
      const set = await configSetOf(ctx, options);
      const api = await ctx.api();
      const result = await ctx.out.spin(`Pulling ${set.label}/${set.environment}`, () => createEnvService().pull(api, set, options.includeSecrets === true));
      if (result.changes.length === 0 && result.skippedSecrets.length === 0) ctx.out.warn(`the store holds no configuration for ${set.label}/${set.environment}`);
      ctx.out.data(result, renderPull);
    }),
  { calls: ['GET /v4/platform/config/{tenantId}/{label}/{environment}'] },
);
