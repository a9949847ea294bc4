import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { codeHost, repoOption } from './_code-host.ts';
import { renderRuns } from './_render.ts';

export const command = withMeta(
  new Command('status')
    .description("The repository's latest workflow runs on the code host, newest first (20): workflow, branch, event, status and conclusion.")
    .addOption(repoOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { deploy, api, repo } = await codeHost(options.repo);
      ctx.out.data(await ctx.out.spin('Reading the runs', () => deploy.listRuns(api, repo)), renderRuns);
    }),
  { calls: ['GET {code_host_url}/repos/{owner}/{repo}/actions/runs'] },
);
