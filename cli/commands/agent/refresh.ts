import { Command } from '@commander-js/extra-typings';
import { formatOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES } from '../../errors.ts';
import { table, type TextRenderer } from '../../output.ts';
import type { AgentRefreshReport } from '../../services/agent.service.ts';
import { projectManifest } from '../_project.ts';

const WORDS = { create: ['create', 'created'], update: ['update', 'updated'], conflict: ['conflict: changed here', 'replaced (yours saved)'], unchanged: ['up to date', 'up to date'], keep: ['kept', 'kept'] } as const;

const render: TextRenderer<AgentRefreshReport> = (report, style) => {
  const rows = report.files.map((f) => [f.path, f.action === 'conflict' && !f.backup ? (report.check ? 'conflict: changed here' : 'left: changed here (--force replaces it)') : WORDS[f.action][report.check ? 0 : 1], f.backup ?? '-']);
  const verdict = report.check
    ? report.upToDate
      ? 'The agent assets are up to date.'
      : `${report.summary.create + report.summary.update + report.summary.conflict} agent asset(s) differ from the client's: run svc agent refresh${report.summary.conflict ? ' --force' : ''}.`
    : report.upToDate
      ? 'The agent assets are up to date.'
      : `${report.conflicts.length} file(s) changed here were left as they are: svc agent refresh --force replaces them, saving yours as <file>.bak.`;
  return `${table(['FILE', report.check ? 'STATE' : 'DONE', 'BACKUP'], rows, style)}\n\n${verdict}`;
};

export const command = withMeta(
  new Command('refresh')
    .description(
      "Copy the client's agent assets (AGENTS.md and .agents/: instructions for coding assistants working in the app) into the project: " +
        "missing files created, files the client wrote and nobody changed updated; a file changed here is left as it is unless --force. " +
        'Exit 9 when --check finds a difference, or when changed files were left.',
    )
    .option('--check', 'only report what would change; write nothing')
    .option('--force', 'replace files changed here too, saving each as <file>.bak first')
    .addOption(formatOption())
    .action(async (options, cmd) => {
      const { refreshAgentAssets } = await import('../../services/agent.service.ts');
      const ctx = contextOf(cmd);
      const { root, manifest } = await projectManifest(ctx);
      const report = await refreshAgentAssets(root, manifest, { check: options.check === true, force: options.force === true });
      ctx.out.data(report, render);
      if (!report.upToDate) process.exitCode = EXIT_CODES.checksFailed;
    }),
  { calls: [] },
);
