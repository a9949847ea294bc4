import { table, type TextRenderer } from '../../output.ts';
import type { DoctorReport, StorageStatus } from '../../services/storage.service.ts';

/** The doctor's checks as a table, then the summary line. */
export const renderDoctor: TextRenderer<DoctorReport> = (report, style) => {
  const mark = (result: string) =>
    style.simple ? result : result === 'ok' ? style.colors.green('ok') : result === 'warn' ? style.colors.yellow('warn') : style.colors.red('fail');
  const rows = report.checks.map((c) => [c.backend, c.name, mark(c.result), c.hint ? `${c.message} (${c.hint})` : c.message]);
  const { ok, warn, fail } = report.summary;
  return `${table(['BACKEND', 'CHECK', 'RESULT', 'MESSAGE'], rows, style)}\n${style.colors.dim(`${report.result}: ${ok} ok, ${warn} warn, ${fail} fail`)}`;
};

type Changes = { backend?: string; dryRun?: boolean; changes?: Array<{ action: string; description?: string }>; skipped?: Array<{ objectType: string; field: string; reason: string }> };

/** A sync-schema or provision answer: each change on a line, then the skipped fields. */
export const renderChanges: TextRenderer<Changes> = (answer, style) => {
  const changes = answer.changes ?? [];
  const verb = answer.dryRun ? 'would make' : 'made';
  const lines = [`${answer.backend ?? 'storage'}: ${verb} ${changes.length} change(s)`, ...changes.map((c) => `  ${c.action} ${c.description ?? ''}`.trimEnd())];
  for (const skip of answer.skipped ?? []) lines.push(style.colors.dim(`  skipped ${skip.objectType}.${skip.field}: ${skip.reason}`));
  return lines.join('\n');
};

/** Each backend's state and where its data lives, then whether the tenant's storage is ready. */
export const renderStatus: TextRenderer<StorageStatus> = (status, style) => {
  const backends = status.backends ?? [];
  const rows = backends.map((b) => [b.backend, b.status, b.location?.store ?? '-', b.location?.isolation ?? '-', b.provisionedAt ?? '-']);
  const errors = backends.filter((b) => b.error).map((b) => style.colors.red(`${b.backend}: ${b.error}`));
  const workflow = status.workflow?.status ? `; provisioning workflow ${status.workflow.status}` : '';
  return [table(['BACKEND', 'STATUS', 'STORE', 'ISOLATION', 'PROVISIONED'], rows, style), ...errors, style.colors.dim(`ready: ${status.ready ? 'yes' : 'no'}${workflow}`)].join('\n');
};
