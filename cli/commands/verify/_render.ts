import type { TextRenderer } from '../../output.ts';
import type { VerifyCheck, VerifyReport } from '../../services/verify.service.ts';

/** One line per check (`✓`, `✗` or `-` for skipped; words with `--simple`). */
export const renderCheck = (check: VerifyCheck, style: Parameters<TextRenderer<unknown>>[1]): string => {
  const { colors, simple } = style;
  const mark = check.skipped
    ? simple ? 'skipped' : colors.dim('-')
    : simple ? (check.ok ? 'ok' : 'FAILED') : check.ok ? colors.green('✓') : colors.red('✗');
  const detail = check.error ? `${check.error.code} ${check.detail}` : check.detail;
  return `${mark} ${check.name}: ${detail}`;
};

/** The checks, then `passed, failed, skipped`. */
export const renderReport: TextRenderer<VerifyReport> = (report, style) => {
  const { passed, failed, skipped } = report.summary;
  return [...report.checks.map((c) => renderCheck(c, style)), style.colors.dim(`${passed} passed, ${failed} failed, ${skipped} skipped`)].join('\n');
};
