import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderDescription } from './_render.ts';

export const command = withMeta(
  new Command('describe')
    .description("Show one block of the client's catalog or the project's own: what it provides (routes, capabilities, object types, workflows, commands, variables), what it requires and what requires it. E202 when there is no such block.")
    .argument('<block-id>', 'the block id (svc blocks list shows them)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (id, _options, cmd) => {
      const ctx = contextOf(cmd);
      const { describeBlock } = await import('../../services/blocks.service.ts');
      ctx.out.data(await describeBlock(id), renderDescription);
    }),
  { calls: [] },
);
