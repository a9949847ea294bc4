import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { COUPLINGS, GROUPS, LANES, PACKAGE_PROFILES, READINESS } from '../../services/blocks.constants.ts';
import { renderList } from './_render.ts';

export const command = withMeta(
  new Command('list')
    .description(
      "List the platform's building blocks from the catalog that ships with the client, with the project's own blocks " +
        '(svc.blocks.json beside svc.config.ts, marked custom) when there are any; every filter given must hold. No API call.',
    )
    .addOption(new Option('--lane <lane>', 'only blocks of this lane').choices(LANES))
    .addOption(new Option('--coupling <coupling>', 'only blocks of this coupling').choices(COUPLINGS))
    .addOption(new Option('--readiness <readiness>', 'only blocks of this readiness').choices(READINESS))
    .addOption(new Option('--package-profile <profile>', 'only blocks a package of this profile may include').choices(PACKAGE_PROFILES))
    .option('--custom', "only the project's own blocks (svc.blocks.json; E001 outside a project, E003 without the file)")
    .addOption(new Option('--group-by <field>', 'group the blocks by this field (a block is under each of its profiles)').choices(GROUPS).default('lane' as const))
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { listBlocks } = await import('../../services/blocks.service.ts');
      const list = await listBlocks(
        { lane: options.lane, coupling: options.coupling, readiness: options.readiness, packageProfile: options.packageProfile, custom: options.custom },
        options.groupBy,
      );
      ctx.out.data(list, renderList);
    }),
  { calls: [] },
);
