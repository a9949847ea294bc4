import { Command } from '@commander-js/extra-typings';
import { formatOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES } from '../../errors.ts';
import { table, type TextRenderer } from '../../output.ts';
import type { TemplateDriftReport } from '../../services/template.service.ts';
import { projectManifest } from '../_project.ts';

const MEANING = {
  unchanged: 'as the template',
  outdated: 'outdated: the template changed (svc init --current-dir updates it)',
  modified: 'changed here (svc init --current-dir replaces it, saving yours as .bak)',
  missing: 'missing',
  present: 'present (yours)',
} as const;

const render: TextRenderer<TemplateDriftReport> = (report, style) => {
  const rows = report.files.map((f) => [f.path, f.kind, MEANING[f.status]]);
  const s = report.summary;
  const head = report.comparable ? '' : `Scaffolded from ${report.source}: only the agent assets are compared with the client's.\n\n`;
  const verdict = report.drift
    ? `Drift: ${s.outdated} outdated, ${s.modified} changed here, ${s.missing} missing (scaffolded with client ${report.scaffoldedWith}, this is ${report.clientVersion}).`
    : `No drift: ${s.unchanged + s.present} files match the client's template (${report.clientVersion}).`;
  return `${head}${rows.length ? table(['FILE', 'KIND', 'STATE'], rows, style) + '\n\n' : ''}${verdict}`;
};

export const command = withMeta(
  new Command('check')
    .description(
      "Compare the project's scaffold files with the template that ships with this client, writing nothing: each file as the template, " +
        'outdated (the template changed since it was written), changed here, or missing; seeded files (configuration, object types, ' +
        'pages, README) only need to exist. Exit 9 when anything drifted.',
    )
    .addOption(formatOption())
    .action(async (options, cmd) => {
      const { templateDrift } = await import('../../services/template.service.ts');
      const ctx = contextOf(cmd);
      const { root } = await projectManifest(ctx);
      const report = await templateDrift(root);
      ctx.out.data(report, render);
      if (report.drift) process.exitCode = EXIT_CODES.checksFailed;
    }),
  { calls: [] },
);
