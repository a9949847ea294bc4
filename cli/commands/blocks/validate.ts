import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import { problemLine, renderValidation } from './_render.ts';

export const command = withMeta(
  new Command('validate')
    .description(
      "Validate a block catalog file against its JSON Schema (svc blocks schema) and the rules between blocks: --file, else the " +
        "project's svc.blocks.json (E003 when there is none). A project's blocks may require the client's, and may not reuse their " +
        'ids. Errors fail (E301); warnings (an internal-only block offered to the external profile, an adapter not named, a blocked ' +
        'block without its reason, a public-ready block requiring one that is not, a block that provides nothing) are printed, and ' +
        'fail with --strict (E302).',
    )
    .option('--file <path>', "the catalog file to validate (default: the project's svc.blocks.json)")
    .option('--strict', 'warnings fail too (E302)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { validateCatalog } = await import('../../services/blocks.service.ts');
      const report = await validateCatalog(options.file);
      const text = ctx.out.format === 'text';
      if (text) for (const problem of report.errors) ctx.out.warn(problemLine('error', problem));
      if (report.errors.length) throw new CliError('E301', { details: `${report.file}: ${report.errors.map((p) => `${p.at}: ${p.message}`).join('; ')}` });
      if (text) for (const problem of report.warnings) ctx.out.warn(problemLine('warning', problem));
      if (options.strict && report.warnings.length) {
        throw new CliError('E302', { details: `${report.file}: ${report.warnings.length} warning(s) with --strict: ${report.warnings.map((p) => `${p.at}: ${p.message}`).join('; ')}` });
      }
      ctx.out.data(report, renderValidation);
    }),
  { calls: [] },
);
