import { CliError } from '../errors.ts';
import type { Answer, RequestBody, Schemas } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';

/** A membership of the caller, as `GET /v4/identity/tenants` lists it. */
export type TenantMembership = Schemas['TenantMembership'];

/** A tenant as the platform answers its creation. */
export type CreatedTenant = Schemas['Tenant'];

/** What a new tenant is given: a child's fields (a root tenant also needs its home region). */
export type TenantFields = RequestBody<'createChildTenant'>;

/** A membership granted (or found) by an invitation or self-provisioning. */
export type Membership = Schemas['Membership'];

const seg = encodeURIComponent;

/** The caller's tenants over v4: memberships (`GET /v4/identity/tenants`), creation and deletion. */
export function createTenantsService(api: ApiClient) {
  const memberships = async () => (await api.request<Answer<'listMyTenants'>>('GET', '/v4/identity/tenants')).body;
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

    /** A root tenant (platform administrators only). */
    async createRoot(fields: RequestBody<'createRootTenant'>): Promise<CreatedTenant> {
      return (await api.request<CreatedTenant>('POST', '/v4/platform/tenants', { body: fields })).body;
    },

    /** A child of `parentId`, then the caller made its tenant-admin (bootstrap-admin). */
    async createChild(parentId: string, fields: TenantFields): Promise<CreatedTenant> {
      const subject = `Tenant ${parentId}`;
      const child = (await api.request<CreatedTenant>('POST', `/v4/platform/tenants/${seg(parentId)}/children`, { body: fields, subject })).body;
      await api.request('POST', `/v4/platform/tenants/${seg(parentId)}/children/${seg(child.id)}/bootstrap-admin`, { subject });
      return child;
    },

    /**
     * Polls the caller's memberships until the tenant is usable (`active`), every `intervalMs`;
     * a tenant whose provisioning failed is E203 with the platform's reason, and one still
     * provisioning after `timeoutMs` is E203 naming its status.
     */
    async waitUntilUsable(id: string, options: { intervalMs?: number; timeoutMs?: number } = {}): Promise<TenantMembership> {
      const { intervalMs = 500, timeoutMs = 120_000 } = options;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = (await memberships()).data.find((t) => t.id === id);
        if (found?.status === 'active') return found;
        if (found?.status === 'failed') throw new CliError('E203', { details: `provisioning of ${found.slug} failed: ${found.statusReason ?? 'no reason given'}` });
        if (Date.now() >= deadline) throw new CliError('E203', { details: `tenant ${id} is still ${found?.status ?? 'not visible to you'} after ${Math.round(timeoutMs / 1000)} s` });
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    },

    async delete(id: string): Promise<Record<string, unknown>> {
      return (await api.request<Record<string, unknown>>('POST', `/v4/platform/tenants/${seg(id)}/delete`, { subject: `Tenant ${id}` })).body ?? { id, deleted: true };
    },
  };
}

/** Users over v4: look one up by e-mail, grant a membership, provision oneself. */
export function createUsersService(api: ApiClient) {
  return {
    async findByEmail(email: string): Promise<Answer<'findUserByEmail'>> {
      return (await api.request<Answer<'findUserByEmail'>>('GET', '/v4/platform/users/by-email', { query: { email }, subject: `User ${email}` })).body;
    },

    async provision(tenantId: string, userId: string): Promise<Membership> {
      const path = `/v4/platform/tenants/${seg(tenantId)}/users/${seg(userId)}/provision`;
      return (await api.request<Membership>('POST', path, { subject: `Tenant ${tenantId}` })).body;
    },

    async provisionMe(tenantId: string): Promise<Membership> {
      const body: RequestBody<'provisionMe'> = { tenant_id: tenantId };
      return (await api.request<Membership>('POST', '/v4/identity/me/provision', { body, subject: `Tenant ${tenantId}` })).body;
    },

    /** Removes the user's membership of the tenant, or their invitation. */
    async remove(tenantId: string, userId: string): Promise<void> {
      await api.request('DELETE', `/v4/platform/tenants/${seg(tenantId)}/users/${seg(userId)}`, { subject: `Member ${userId} of tenant ${tenantId}` });
    },

    /** Declines the caller's invitation to the tenant. */
    async declineInvitation(tenantId: string): Promise<void> {
      const body: RequestBody<'declineInvitation'> = { tenant_id: tenantId };
      await api.request('POST', '/v4/identity/me/decline', { body, subject: `Invitation to tenant ${tenantId}` });
    },
  };
}
