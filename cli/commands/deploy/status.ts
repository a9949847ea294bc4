import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderRuns } from './_render.ts';

export const command = withMeta(
  new Command('status')
    .description("The repository's latest workflow runs on the code host, newest first (20): workflow, branch, event, status and conclusion.")
    .option('--repo <owner/name>', "the repository (default: the git remote origin's)")
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const deploy = await import('../../services/deploy.service.ts');
      const api = deploy.codeHostClient();
      const repo = await deploy.resolveRepo(options.repo);
      ctx.out.data(await ctx.out.spin('Reading the runs', () => deploy.listRuns(api, repo)), renderRuns);
    }),
  { calls: ['GET {code_host_url}/repos/{owner}/{repo}/actions/runs'] },
);
