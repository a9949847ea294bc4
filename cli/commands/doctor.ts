import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { withMeta } from '../command.ts';
import { contextOf } from '../context.ts';
import { EXIT_CODES } from '../errors.ts';
import type { Colors } from '../output.ts';
import type { CheckStatus, DoctorCheck, DoctorReport } from '../services/doctor.service.ts';

const MARKS: Record<CheckStatus, { symbol: string; word: string; color: keyof Colors }> = {
  ok: { symbol: '✓', word: 'ok', color: 'green' },
  fixed: { symbol: '✓', word: 'fixed', color: 'green' },
  warn: { symbol: '!', word: 'warning', color: 'yellow' },
  fail: { symbol: '✗', word: 'FAILED', color: 'red' },
  skip: { symbol: '-', word: 'skipped', color: 'dim' },
};

/** `✓ name: detail` (words instead of symbols with `--simple`), the error's code before a failure's detail, the hint below. */
function renderCheck(check: DoctorCheck, style: { colors: Colors; simple: boolean }): string {
  const mark = MARKS[check.status];
  const paint = style.colors[mark.color] as (text: string) => string;
  const label = style.simple ? mark.word : paint(mark.symbol);
  const detail = `${check.status === 'fixed' && !style.simple ? 'fixed: ' : ''}${check.error ? `${check.error.code} ` : ''}${check.detail}`;
  const hint = check.hint && check.status !== 'ok' ? `\n  ${style.simple ? 'Suggestion: ' : style.colors.dim('→ ')}${check.hint}` : '';
  return `${label} ${check.name}: ${detail}${hint}`;
}

function renderReport(report: DoctorReport, style: { colors: Colors; simple: boolean }): string {
  const s = report.summary;
  const counts = [`${s.ok} ok`, s.fixed ? `${s.fixed} fixed` : '', `${s.warn} warning(s)`, `${s.fail} failed`, `${s.skip} skipped`].filter(Boolean).join(', ');
  return [...report.checks.map((c) => renderCheck(c, style)), style.colors.dim(counts)].join('\n');
}

export const command = withMeta(
  new Command('doctor')
    .description(TOP_LEVEL.doctor.description)
    .option('--fix', "write missing and outdated unedited scaffold files from the template, add BASE_URL_PUBLIC_API (the client's) to .env.local, add .env.local to .gitignore, chmod 600 .env.local and the tokens file")
    .option('--check-updates', 'also report whether a newer release of the client exists (a warning when it does)')
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const { runDoctor } = await import('../services/doctor.service.ts');
      const report = await ctx.out.spin('Checking', () => runDoctor({ profile: ctx.profile, api: ctx.api, fix: options.fix === true, checkUpdates: options.checkUpdates === true }));
      ctx.out.text(renderReport(report, { colors: ctx.out.colors, simple: ctx.out.simple }));
      if (!report.ok) process.exitCode = EXIT_CODES.checksFailed;
    }),
  { calls: ['GET /health', 'GET /v4/identity/me', 'GET {registry_url}/{package} (with --check-updates)'], plainText: true },
);
