import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../command.ts';
import { contextOf } from '../context.ts';

export const command = withMeta(
  new Command('update')
    .description(
      "Check for a newer release of the client and install it. Reads the release registry over the npm registry protocol: " +
        '`GET <registry>/<package>` and its `dist-tags.latest`, where the registry is SVC_REGISTRY_URL, else npm\'s registry setting ' +
        "(the client's scope's, then `registry`). A newer release is installed with npm where the client is installed (`npm install -g` " +
        'into the same prefix, or into the project that depends on it); a client run from a source checkout is not updated (E305). ' +
        'E201 when the registry does not answer, E202 when it has no such package.',
    )
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
