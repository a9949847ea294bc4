import { fields, table, type TextRenderer } from '../../output.ts';
import type { BlockDescription, BlockList, Problem, ReadinessReport, ValidationReport } from '../../services/blocks.service.ts';

const custom = (source: string) => (source === 'custom' ? ' (custom)' : '');

/** One table per group, under `<group> (<n>)`. */
export const renderList: TextRenderer<BlockList> = (list, style) => {
  if (!list.total) return style.colors.dim('No blocks match.');
  const sections = list.groups.map((group) => {
    const rows = group.blocks.map((b) => [b.id + custom(b.source), b.lane, b.coupling, b.readiness, b.packageProfiles.join(', ')]);
    const headers = ['ID', 'LANE', 'COUPLING', 'READINESS', 'PROFILES'];
    return `${style.colors.bold(`${group.key} (${group.blocks.length})`)}\n${table(headers, rows, style)}`;
  });
  return `${sections.join('\n\n')}\n\n${style.colors.dim(`${list.total} block(s) by ${list.groupBy}`)}`;
};

export const renderDescription: TextRenderer<BlockDescription> = (block, style) => {
  const entries: Array<[string, string]> = [
    ['id', block.id + custom(block.source)],
    ['name', block.name],
    ['description', block.description],
    ['lane', block.lane],
    ['coupling', block.coupling],
    ['readiness', block.readiness],
    ['package', block.package],
    ['profiles', block.packageProfiles.join(', ')],
    ['requires', block.requires?.join(', ') || '-'],
    ['required by', block.requiredBy.join(', ') || '-'],
  ];
  if (block.adapter) entries.push(['adapter', block.adapter]);
  if (block.blockedReason) entries.push(['blocked', block.blockedReason]);
  if (block.docs) entries.push(['docs', block.docs]);
  const provides = Object.entries(block.provides)
    .filter(([, list]) => list && list.length)
    .map(([kind, list]) => `${style.colors.bold(kind)}\n${list.map((item) => `  ${item}`).join('\n')}`);
  return `${fields(entries, style)}${provides.length ? `\n\n${provides.join('\n')}` : ''}`;
};

export const renderReadiness: TextRenderer<ReadinessReport> = (report, style) => {
  const from = report.profileFrom === 'default' ? 'the default' : report.profileFrom === 'svc.project.json' ? "the project's" : 'as given';
  const s = report.summary;
  const total = s['public-ready'] + s.preview + s.internal + s.blocked;
  const list = (title: string, items: ReadinessReport['cautions']) =>
    items.length ? [`${title}:`, ...items.map((item) => `  ${item.id}${custom(item.source)} (${item.readiness}): ${item.reason}`)] : [];
  const lines = [
    `Package profile ${report.packageProfile} (${from}): ${total} block(s), ${s['public-ready']} public-ready, ${s.preview} preview, ${s.internal} internal, ${s.blocked} blocked.`,
    `Available: ${report.available.join(', ') || 'none'}`,
    ...list('Cautions', report.cautions),
    ...list('Unavailable', report.unavailable),
  ];
  if (report.project) {
    lines.push('', ...list(`The project's blocks (${report.project.file}) cannot ship`, report.project.blockers));
    lines.push(report.project.ready ? style.colors.green("Ready: the project's blocks can ship in this profile.") : style.colors.red(`Not ready: ${report.project.blockers.length} blocker(s).`));
  }
  return lines.join('\n');
};

export const problemLine = (kind: 'error' | 'warning', problem: Problem) => `${kind}: ${problem.at}: ${problem.message}`;

export const renderValidation: TextRenderer<ValidationReport> = (report, style) =>
  `${style.simple ? 'ok' : style.colors.green('✓')} ${report.file}: ${report.blocks} block(s) valid${report.warnings.length ? `, ${report.warnings.length} warning(s)` : ''}`;

/** The JSON Schema as an outline: each field with its type, whether it is required, and its description. */
export const renderSchema: TextRenderer<Record<string, unknown>> = (schema, style) => {
  type Node = { type?: string; description?: string; properties?: Record<string, Node>; required?: string[]; items?: Node; enum?: unknown[]; const?: unknown; pattern?: string; minItems?: number };
  const lines: string[] = [];
  const typeOf = (node: Node): string =>
    node.enum ? node.enum.map(String).join(' | ') : node.const !== undefined ? JSON.stringify(node.const) : node.type === 'array' && node.items ? (node.items.enum ? `(${typeOf(node.items)})[]` : `${typeOf(node.items)}[]`) : (node.type ?? 'any');
  const walk = (node: Node, prefix: string, depth: number) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const required = node.required?.includes(name) ? 'required' : 'optional';
      lines.push(`${'  '.repeat(depth)}${style.colors.bold(prefix + name)}  ${typeOf(child)}  ${style.colors.dim(required)}${child.description ? `  ${child.description}` : ''}`);
      const inner = child.type === 'array' ? child.items : child;
      if (inner?.properties) walk(inner, `${prefix}${name}${child.type === 'array' ? '[]' : ''}.`, depth + 1);
    }
  };
  lines.push(String((schema as Node).description ?? ''), '');
  walk(schema, '', 0);
  return lines.join('\n');
};
