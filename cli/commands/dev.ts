import { Command, Option } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { intOption, withMeta } from '../command.ts';
import { contextOf } from '../context.ts';
import type { DevCheck } from '../services/dev.service.ts';
import { runnableProject } from './_project.ts';

export const command = withMeta(
  new Command('dev')
    .description(TOP_LEVEL.dev.description)
    .addOption(intOption('--port <port>', 'port to serve on', 3000))
    .addOption(new Option('--turbo', 'restart the server when a file it loaded changes (node --watch; SVC_DEV_TURBO=1)').default(true))
    .addOption(new Option('--no-turbo', 'run the server once, without watching (SVC_DEV_TURBO=0)'))
    .option('--skip-checks', 'start at once, without checking the env, the platform and the login')
    .action(async (options, cmd) => {
      const { checkEnv, checkLogin, checkPlatform, checkPort, runDevServer } = await import('../services/dev.service.ts');
      const { loadProjectConfig } = await import('../services/project.service.ts');
      const ctx = contextOf(cmd);
      const root = await runnableProject(ctx);
      const config = await loadProjectConfig(root);
      if (!options.skipChecks) {
        const passed = (check: DevCheck) => ctx.out.success(`${check.name}: ${check.detail}`);
        const env = await checkEnv(root, config, (name) => {
          if (name.startsWith('SVC_IDP_')) ctx.out.info(`${name} comes from svc provision idp, which registers the app's sign-in client and writes it to ${config.env.file}.`);
        });
        passed(env.check);
        const baseUrl = env.values['BASE_URL_PUBLIC_API'];
        if (baseUrl) passed(await ctx.out.spin('Reaching the platform', () => checkPlatform(baseUrl)));
        passed(await checkLogin(ctx.profile));
        passed(await checkPort(options.port));
      }
      ctx.out.info(`Starting ${config.app.name ?? 'the app'} on http://localhost:${options.port}${options.turbo ? ' (restarts on changes)' : ''}; Ctrl-C stops it.`);
      process.exitCode = await runDevServer(root, { port: options.port, turbo: options.turbo !== false });
    }),
  { calls: ['GET /health'], plainText: true },
);
