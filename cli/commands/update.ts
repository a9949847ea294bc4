import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { withMeta } from '../command.ts';
import { contextOf } from '../context.ts';

export const command = withMeta(
  new Command('update')
    .description(TOP_LEVEL.update.description)
    .option('--check', 'only report whether a newer release exists; install nothing')
    .action(async (options, cmd) => {
      const { releaseStatus, updatableLocation, updateClient } = await import('../services/release.service.ts');
      const ctx = contextOf(cmd);
      const status = await ctx.out.spin('Reading the release registry', () => releaseStatus());
      const which = `${status.name} ${status.current}`;
      if (options.check || !status.updateAvailable) {
        const ahead = !status.updateAvailable && status.current !== status.latest;
        ctx.out.text(
          status.updateAvailable
            ? `Update available: ${which} -> ${status.latest} (${status.registry}); run svc update`
            : ahead
              ? `${which} is newer than the latest release, ${status.latest} (${status.registry})`
              : `Up to date: ${which} is the latest release (${status.registry})`,
        );
        return;
      }
      const location = updatableLocation();
      ctx.out.info(`Installing ${status.name}@${status.latest} with npm into ${location.kind === 'global' ? location.prefix : location.dir}`);
      const result = await updateClient(status);
      ctx.out.text(`Updated ${status.name} ${status.current} -> ${result.latest} in ${result.installedIn}`);
    }),
  { calls: ['GET {registry_url}/{package}'], plainText: true },
);
