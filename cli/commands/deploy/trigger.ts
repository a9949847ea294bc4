import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { codeHost, repoOption } from './_code-host.ts';
import { renderTrigger } from './_render.ts';

export const command = withMeta(
  new Command('trigger')
    .description(
      "Start the repository's deploy workflow on a branch: a workflow dispatch on the code host (the workflow must allow " +
        'workflow_dispatch). E202 when the repository or workflow does not exist.',
    )
    .addOption(repoOption())
    .option('--branch <branch>', 'the branch (or tag) to run it on', 'main')
    .option('--workflow <filename>', "the workflow's file name under .github/workflows, or its id", 'deploy-demo.yml')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { deploy, api, repo } = await codeHost(options.repo);
      ctx.out.data(await deploy.triggerWorkflow(api, repo, options.workflow, options.branch), renderTrigger);
    }),
  { calls: ['POST {code_host_url}/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches'] },
);
