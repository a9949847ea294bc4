import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES } from '../../errors.ts';
import { PACKAGE_PROFILES } from '../../services/blocks.constants.ts';
import { renderReadiness } from './_render.ts';

export const command = withMeta(
  new Command('readiness')
    .description(
      "Which blocks a package profile may use: the profile given, else the project's (svc.project.json), else external (svc " +
        "init's default). Available: public-ready; cautions: preview, and internal outside the external profile; unavailable: " +
        "blocked, and internal in the external profile. With the project's own blocks (svc.blocks.json), whether they can ship in " +
        'the profile: exit 9 when one of them is unavailable, outside the profile, or requires a block that is.',
    )
    .addOption(new Option('--package-profile <profile>', "the package profile (default: the project's, else external)").choices(PACKAGE_PROFILES))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { blocksReadiness } = await import('../../services/blocks.service.ts');
      const report = await blocksReadiness(options.packageProfile);
      ctx.out.data(report, renderReadiness);
      if (report.project && !report.project.ready) process.exitCode = EXIT_CODES.checksFailed;
    }),
  { calls: [] },
);
