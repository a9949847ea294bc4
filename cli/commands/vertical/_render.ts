import { renderRecord, table, type TextRenderer } from '../../output.ts';
import type { ResourcePage } from '../../services/resources.service.ts';
import type { AppData } from '../../services/verticals.service.ts';

/** The apps of a tenant: key, name, status, template, child tenant and URL. */
export const renderApps: TextRenderer<ResourcePage> = (page, style) => {
  if (page.data.length === 0) return 'No apps.';
  const rows = page.data.map((r) => {
    const app = r.data as unknown as AppData;
    return [app.key, app.name, app.status, app.template ?? '-', app.childTenantSlug ?? '-', app.appUrl ?? '-'];
  });
  return `${table(['KEY', 'NAME', 'STATUS', 'TEMPLATE', 'CHILD TENANT', 'APP URL'], rows, style)}\n${style.colors.dim(`${page.data.length} of ${page.total}`)}`;
};

export { renderRecord as renderApp };
