import { table, type TextRenderer } from '../../output.ts';
import type { EnvListing, PullResult, PushResult } from '../../services/env.service.ts';
import { MASK } from '../../services/env.constants.ts';

export const renderListing: TextRenderer<EnvListing> = (listing, style) =>
  listing.entries.length === 0
    ? `No entries in ${listing.file}.`
    : table(
        ['KEY', 'VALUE', 'SECRET'],
        listing.entries.map((e) => [e.key, e.value === null ? MASK : e.value.replace(/\r/g, '\\r').replace(/\n/g, '\\n'), e.secret ? 'yes' : 'no']),
        style,
      ) + (listing.entries.some((e) => e.value === null) ? `\n${style.colors.dim('secrets masked: --show-secrets shows them')}` : '');

export const renderPull: TextRenderer<PullResult> = (result, style) => {
  const lines = result.changes.length ? [table(['KEY', 'ACTION', 'SECRET'], result.changes.map((c) => [c.key, c.action, c.secret ? 'yes' : 'no']), style)] : [];
  const counted = (action: string) => result.changes.filter((c) => c.action === action).length;
  lines.push(`${result.label}/${result.environment} -> ${result.file}: ${counted('added')} added, ${counted('updated')} updated, ${counted('unchanged')} unchanged`);
  if (result.skippedSecrets.length) lines.push(style.colors.dim(`${result.skippedSecrets.length} secret(s) not pulled (${result.skippedSecrets.join(', ')}): --include-secrets pulls them`));
  return lines.join('\n');
};

export const renderPush: TextRenderer<PushResult> = (result, style) =>
  [
    table(['KEY', 'ACTION', 'SECRET'], result.changes.map((c) => [c.key, c.action, c.secret ? 'yes' : 'no']), style),
    `${result.file} -> ${result.label}/${result.environment}: ${result.changes.filter((c) => c.action !== 'unchanged').length} changed, ${result.changes.filter((c) => c.action === 'unchanged').length} unchanged`,
  ].join('\n');
