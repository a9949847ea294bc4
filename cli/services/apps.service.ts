import { CliError } from '../errors.ts';
import type { Answer } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';
import { snakeCaseFields } from './wire-fields.ts';

/** An app enrollment as `POST /v4/platform/tenants/{companyTenantId}/apps` returns it. */
export type AppEnrollment = Answer<'createApp'>;

export interface CreateAppBody {
  name: string;
  key: string;
  source?: string;
  status?: string;
  childTenant?: { name: string; slug?: string };
  parentTenant?: string;
}

export interface CapabilityDecision {
  allowed: boolean;
  reason: string;
  limits: Record<string, number>;
}

export interface CapabilityEvaluation {
  tenantId: string;
  plan: string;
  decisions: Record<string, CapabilityDecision>;
}

const APP_TYPE = 'tenant-vertical-enrollment';

/** An enrollment as the resource routes list it (fields under `data`), as the apps route returns it. */
function enrollmentOf(resource: { id: string; data?: Record<string, unknown> } & Record<string, unknown>, companyTenantId: string): AppEnrollment {
  const data = (resource.data ?? resource);
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    id: resource.id,
    key: String(data['key']),
    name: String(data['name']),
    template: text(data['template']),
    source: String(data['source'] ?? ''),
    appUrl: text(data['appUrl']),
    // The enrollment type's schema holds the status to the values the wire type names.
    status: String(data['status'] ?? '') as AppEnrollment['status'],
    companyTenantId,
    childTenantId: text(data['childTenantId']),
    childTenantSlug: text(data['childTenantSlug']),
    createdAt: String(resource['createdAt'] ?? ''),
    updatedAt: String(resource['updatedAt'] ?? ''),
  };
}

/** App enrollments and capability decisions over v4. */
export function createAppsService(api: ApiClient) {
  return {
    /** Enrolls an app in the company tenant (with a child tenant when asked); E205 when the key is taken. */
    async create(companyTenant: string, body: CreateAppBody): Promise<AppEnrollment> {
      return (await api.request<AppEnrollment>('POST', `/v4/platform/tenants/${encodeURIComponent(companyTenant)}/apps`, { body: snakeCaseFields(body), subject: `Tenant ${companyTenant}` })).body;
    },

    /** The app enrolled in the company tenant under `key`, if any. */
    async findByKey(companyTenant: string, key: string): Promise<AppEnrollment | undefined> {
      const page = await api.request<{ data: Array<{ id: string; data?: Record<string, unknown> }> }>('GET', `/v4/data/resources/${encodeURIComponent(companyTenant)}/${APP_TYPE}`, {
        query: { where: JSON.stringify({ key }), limit: 1 },
        subject: `Tenant ${companyTenant}`,
      });
      const found = page.body.data[0];
      return found ? enrollmentOf(found, companyTenant) : undefined;
    },

    /**
     * Enrolls the app, or binds to the app the company tenant already has under its key: the
     * platform refuses a taken key (409), and the enrollment with that key is then read back.
     */
    async createOrBind(companyTenant: string, body: CreateAppBody): Promise<{ status: 'created' | 'bound'; app: AppEnrollment }> {
      try {
        return { status: 'created', app: await this.create(companyTenant, body) };
      } catch (error) {
        if (!(error instanceof CliError && error.code === 'E205')) throw error;
        const existing = await this.findByKey(companyTenant, body.key);
        if (!existing) throw error;
        return { status: 'bound', app: existing };
      }
    },

    /** Every capability's decision for the tenant (its plan, overrides and home region). */
    async evaluateCapabilities(tenant: string): Promise<CapabilityEvaluation> {
      return (await api.request<CapabilityEvaluation>('POST', '/v4/platform/capabilities/evaluate', { body: { tenant_id: tenant }, subject: `Tenant ${tenant}` })).body;
    },
  };
}
