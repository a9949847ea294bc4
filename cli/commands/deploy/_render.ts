import { table, type TextRenderer } from '../../output.ts';
import type { RunsResult, SetupResult, TriggerResult } from '../../services/deploy.service.ts';

export const renderSetup: TextRenderer<SetupResult> = (result, style) => {
  const lines = [table(['SECRET', 'ACTION'], result.secrets.map((s) => [s.name, s.action]), style)];
  if (result.skipped.length) lines.push('', ...result.skipped.map((s) => `skipped ${s.name}: ${s.reason}`));
  lines.push('', style.colors.dim(`${result.secrets.length} secret(s) of ${result.repo} set from ${result.envFile}`));
  return lines.join('\n');
};

export const renderTrigger: TextRenderer<TriggerResult> = (result) =>
  `Dispatched ${result.workflow} on ${result.ref} in ${result.repo}; svc deploy status --repo ${result.repo} shows its run.`;

export const renderRuns: TextRenderer<RunsResult> = (result, style) => {
  if (!result.runs.length) return style.colors.dim(`No workflow runs in ${result.repo}.`);
  const rows = result.runs.map((r) => [String(r.id), r.name, r.branch, r.event, r.status, r.conclusion ?? '-', r.createdAt]);
  return `${table(['ID', 'WORKFLOW', 'BRANCH', 'EVENT', 'STATUS', 'CONCLUSION', 'CREATED'], rows, style)}\n${style.colors.dim(`${result.runs.length} of ${result.total} run(s) of ${result.repo}`)}`;
};
