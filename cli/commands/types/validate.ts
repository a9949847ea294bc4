import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';

export const command = withMeta(
  new Command('validate')
    .description(
      "Check the project's object types (src/svc.config/object-types.ts) without calling the platform: names PascalCase, keys kebab-case " +
        'and free of the data routes, no key twice, an object schema, indexes and search fields as field paths. From any folder of a ' +
        'project (the file is found at its root); E004 when the file is missing or exports no list, E301 naming each problem.',
    )
    .action(async (_options, cmd) => {
      const { loadObjectTypes, validateObjectTypes } = await import('../../services/object-types.service.ts');
      const { findProjectRoot } = await import('../../services/project.service.ts');
      const ctx = contextOf(cmd);
      const { file, types } = await loadObjectTypes((await findProjectRoot()) ?? process.cwd());
      const problems = validateObjectTypes(types);
      if (problems.length) throw new CliError('E301', { details: problems.join('; ') });
      ctx.out.success(`${types.length} object types in ${file} are valid.`);
    }),
  { calls: [], plainText: true },
);
