import { fields, table, type TextRenderer } from '../../output.ts';
import type { TenantMembership } from '../../services/tenants.service.ts';

export const renderTenants: TextRenderer<{ data: TenantMembership[] }> = (list, style) =>
  list.data.length === 0
    ? 'No tenants.'
    : table(['ID', 'SLUG', 'NAME', 'STATUS', 'ROLES'], list.data.map((t) => [t.id, t.slug, t.name, t.status, t.roles.join(',')]), style);

export const renderTenant: TextRenderer<TenantMembership> = (t, style) =>
  fields(
    [
      ['id', t.id],
      ['slug', t.slug],
      ['name', t.name],
      ['status', t.statusReason ? `${t.status} (${t.statusReason})` : t.status],
      ['parent', t.parentId ?? '-'],
      ['homeRegion', t.homeRegion ?? '-'],
      ['roles', t.roles.join(', ')],
    ],
    style,
  );
