import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderListing } from './_render.ts';

export const command = withMeta(
  new Command('list')
    .description(
      "List the project's .env.local (in the project folder: the nearest with svc.config.ts or svc.project.json, else package.json; else the current folder) without calling the platform. " +
        'Secrets are masked unless --show-secrets: entries marked "# svc:secret" (as env pull writes them), named like a secret (SECRET, PASSWORD, TOKEN, PRIVATE, CREDENTIALS, API_KEY, ACCESS_KEY...) or holding a URL with a password. ' +
        'JSON gives a masked value as null.',
    )
    .option('--show-secrets', "show secrets' values")
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createEnvService } = await import('../../services/env.service.ts');
      const ctx = contextOf(cmd);
      ctx.out.data(await createEnvService().list(options.showSecrets === true), renderListing);
    }),
  { calls: [] },
);
