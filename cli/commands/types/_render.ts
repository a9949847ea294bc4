import { table, type TextRenderer } from '../../output.ts';
import type { TypeChange } from '../../services/object-types.service.ts';

export const renderChanges: TextRenderer<{ changes: TypeChange[] }> = (plan, style) =>
  plan.changes.length === 0
    ? 'No object types declared.'
    : table(['ACTION', 'KEY', 'NAME', 'FIELDS'], plan.changes.map((c) => [c.action, c.key, c.name, c.fields.join(', ') || '-']), style);
