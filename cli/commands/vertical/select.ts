import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { VERTICAL_KEY_ENV } from '../../services/env.constants.ts';
import { renderApp } from './_render.ts';

export const command = withMeta(
  new Command('select')
    .description(
      `Make an app the project's: sets ${VERTICAL_KEY_ENV} in the project's .env.local (made, mode 0600, when missing; other lines and comments kept), after checking that the company tenant has the app unless --skip-validate`,
    )
    .argument('<key>', 'the app key')
    .addOption(tenantIdOption())
    .option('--skip-validate', 'do not check that the app exists (no API call)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (key, options, cmd) => {
      const { writeProjectEnv } = await import('../../services/env-file.ts');
      const { checkAppKey, createVerticalsService } = await import('../../services/verticals.service.ts');
      const ctx = contextOf(cmd);
      checkAppKey(key);
      let tenantId: string | undefined;
      if (!options.skipValidate) {
        tenantId = await ctx.tenantId(options.tenantId);
        const verticals = createVerticalsService(await ctx.api());
        await ctx.out.spin(`Checking app ${key}`, () => verticals.find(tenantId!, key));
      }
      const envFile = await writeProjectEnv({ [VERTICAL_KEY_ENV]: key });
      ctx.out.success(`${VERTICAL_KEY_ENV}=${key} written to ${envFile}`);
      ctx.out.data({ key, ...(tenantId ? { tenantId } : {}), validated: !options.skipValidate, envFile }, renderApp);
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/tenant-vertical-enrollment'] },
);
