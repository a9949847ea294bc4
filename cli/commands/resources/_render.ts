import { brief, fields, table, type TextRenderer } from '../../output.ts';
import type { AggregateAnswer, QueryAnswer, Resource, ResourcePage } from '../../services/resources.service.ts';

/** A resource as `key  value` lines, its data as indented JSON. */
export const renderResource: TextRenderer<Resource> = (resource, style) =>
  fields(
    [
      ['id', resource.id],
      ['type', resource.type],
      ['version', String(resource.version)],
      ['createdAt', resource.createdAt],
      ['updatedAt', resource.updatedAt],
    ],
    style,
  ) +
  '\n' +
  (style.simple ? 'data: ' : style.colors.dim('data') + '\n') +
  JSON.stringify(resource.data, null, 2);

/** A page of resources as a table, then where the page stands. */
export const renderPage: TextRenderer<ResourcePage> = (page, style) => {
  if (page.data.length === 0) return `No resources (total ${page.total}).`;
  const rows = page.data.map((r) => [r.id, String(r.version), r.updatedAt, brief(r.data)]);
  const position = page.page === null ? '' : `page ${page.page}, `;
  const next = page.nextCursor ? `; next: --cursor ${page.nextCursor}` : '';
  return `${table(['ID', 'VERSION', 'UPDATED', 'DATA'], rows, style)}\n${style.colors.dim(`${page.data.length} of ${page.total} (${position}limit ${page.limit})${next}`)}`;
};

/** A cross-type query's resources as a table (with their types), then how many of how many. */
export const renderQuery: TextRenderer<QueryAnswer> = (answer, style) => {
  if (answer.data.length === 0) return `No resources (total ${answer.total}).`;
  const rows = answer.data.map((r) => [r.id, r.type, String(r.version), r.updatedAt, brief(r.data)]);
  const next = answer.nextCursor ? `; next: --cursor ${answer.nextCursor}` : '';
  return `${table(['ID', 'TYPE', 'VERSION', 'UPDATED', 'DATA'], rows, style)}\n${style.colors.dim(`${answer.data.length} of ${answer.total}${next}`)}`;
};

/** Summary rows as a table: the group-by fields, then the metrics, in the order the platform gave them. */
export const renderAggregate: TextRenderer<AggregateAnswer> = (answer, style) => {
  if (answer.data.length === 0) return 'No groups.';
  const columns = [...new Set(answer.data.flatMap((row) => Object.keys(row)))];
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : typeof value === 'string' ? value : brief(value));
  const rows = answer.data.map((row) => columns.map((column) => cell(row[column])));
  const more = answer.hasMore ? '; more groups than --limit' : '';
  return `${table(columns.map((c) => c.toUpperCase()), rows, style)}\n${style.colors.dim(`${answer.data.length} group(s)${more}`)}`;
};

/** Any JSON answer, indented (routes whose answer shape the client does not know). */
export const renderJson: TextRenderer<unknown> = (value) => JSON.stringify(value, null, 2);
