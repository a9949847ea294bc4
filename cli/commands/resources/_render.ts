import { brief, fields, table, type TextRenderer } from '../../output.ts';
import type { Resource, ResourcePage } from '../../services/resources.service.ts';

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

/** Any JSON answer, indented (routes whose answer shape the client does not know). */
export const renderJson: TextRenderer<unknown> = (value) => JSON.stringify(value, null, 2);
