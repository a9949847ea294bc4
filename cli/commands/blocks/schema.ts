import { Command, Option } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { FORMATS } from '../../output.ts';
import { renderSchema } from './_render.ts';

export const command = withMeta(
  new Command('schema')
    .description(
      "Print the JSON Schema (draft 2020-12) of a block catalog file: the client's cli/blocks/catalog.json, or a project's " +
        'svc.blocks.json ({catalogVersion: 1, blocks: [manifest...]}). JSON by default; --format text prints an outline of the fields.',
    )
    .addOption(new Option('--format <format>', 'output format').choices(FORMATS).default('json'))
    .action(async (_options, cmd) => {
      const ctx = contextOf(cmd);
      const { blockCatalogJsonSchema } = await import('../../services/blocks.schema.ts');
      ctx.out.data(blockCatalogJsonSchema(), renderSchema);
    }),
  { calls: [] },
);
