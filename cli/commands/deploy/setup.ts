import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { codeHost, repoOption } from './_code-host.ts';
import { renderSetup } from './_render.ts';

export const command = withMeta(
  new Command('setup')
    .description(
      "Set the project's variables (each with a value in .env.local, or the env file svc.config.ts names) as the repository's " +
        "Actions secrets on the code host, each sealed with the repository's public key, so that its deploy workflow gets them. " +
        'The code host is SVC_CODE_HOST_URL (default GitHub\'s API), the token GITHUB_TOKEN (else GH_TOKEN; E002). E001 outside a ' +
        'project, E003 without the env file. A value that names this machine (http://localhost...) is set, with a warning.',
    )
    .addOption(repoOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { deploy, api, repo } = await codeHost(options.repo);
      const result = await ctx.out.spin(`Setting the secrets of ${repo.fullName}`, () => deploy.setupSecrets(api, repo));
      for (const name of result.localValues) ctx.out.warn(`${name} names this machine: the deployed app cannot reach it; set its deployed value in ${result.envFile} and run svc deploy setup again`);
      ctx.out.data(result, renderSetup);
    }),
  { calls: ['GET {code_host_url}/repos/{owner}/{repo}/actions/secrets/public-key', 'PUT {code_host_url}/repos/{owner}/{repo}/actions/secrets/{name}'], plainText: true },
);
