import { CliError } from '../errors.ts';
import type { ApiClient } from './api-client.ts';

/** A membership of the caller, as `GET /v4/identity/tenants` lists it. */
export interface TenantMembership {
  id: string;
  slug: string;
  name: string;
  status: string;
  statusReason?: string | null;
  parentId: string | null;
  homeRegion?: string | null;
  roles: string[];
}

/** The caller's tenants over v4; every function is one `GET /v4/identity/tenants`. */
export function createTenantsService(api: ApiClient) {
  const memberships = async () => (await api.request<{ data: TenantMembership[] }>('GET', '/v4/identity/tenants')).body;
  return {
    /** Tenants the caller administers (`tenant-admin`), or all with `all`; `parent` keeps that tenant's children. */
    async list(options: { all?: boolean; parent?: string; raw?: boolean }): Promise<{ data: TenantMembership[] }> {
      const answer = await memberships();
      if (options.raw) return answer;
      const parent = options.parent && answer.data.find((t) => t.id === options.parent || t.slug === options.parent);
      const data = answer.data.filter(
        (t) => (options.all || t.roles.includes('tenant-admin')) && (!options.parent || t.parentId === (parent ? parent.id : options.parent)),
      );
      return { data };
    },

    /** One of the caller's tenants by id or slug; E202 when the caller has none such. */
    async find(idOrSlug: string): Promise<TenantMembership> {
      const found = (await memberships()).data.find((t) => t.id === idOrSlug || t.slug === idOrSlug);
      if (!found) throw new CliError('E202', { resource: `Tenant ${idOrSlug}` });
      return found;
    },

    async all(): Promise<TenantMembership[]> {
      return (await memberships()).data;
    },
  };
}
