import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import { loadObjectTypes, validateObjectTypes } from '../../services/object-types.service.ts';

export const command = withMeta(
  new Command('validate').description(`Check the project's object types (src/svc.config/object-types.ts) without calling the platform`).action(async (_options, cmd) => {
    const ctx = contextOf(cmd);
    const { file, types } = await loadObjectTypes();
    const problems = validateObjectTypes(types);
    if (problems.length) throw new CliError('E301', { details: problems.join('; ') });
    ctx.out.success(`${types.length} object types in ${file} are valid.`);
  }),
  { calls: [], plainText: true },
);
