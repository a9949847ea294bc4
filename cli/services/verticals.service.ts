import { CliError, invalidInput } from '../errors.ts';
import type { ApiClient } from './api-client.ts';
import type { AppEnrollment } from './apps.service.ts';
import type { Resource, ResourcePage } from './resources.service.ts';
import { createStorageService } from './storage.service.ts';
import { snakeCaseFields } from './wire-fields.ts';

/** App (vertical) enrollments are resources of this built-in type in the company tenant. */
export const APP_OBJECT_TYPE = 'tenant-vertical-enrollment';
export { DEFAULT_APP_SOURCE, DEFAULT_APP_STATUS } from './verticals.constants.ts';

/** What an app's enrollment holds. */
export interface AppData {
  key: string;
  name: string;
  template?: string;
  source: string;
  appUrl?: string;
  status: string;
  childTenantId?: string;
  childTenantSlug?: string;
}

export type AppResource = Omit<Resource, 'data'> & { data: AppData };

/** An app as `POST .../apps` answers it (the enrollment `svc init` makes too). */
export type App = AppEnrollment;

export interface CreateAppFields {
  name: string;
  key?: string;
  template?: string;
  source: string;
  appUrl?: string;
  status: string;
  childTenant?: { name: string; slug?: string };
  parentTenant?: string;
}

const KEBAB_CASE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** An app key as the platform takes it (kebab-case, at most 63 characters); anything else is E305 before any call. */
export function checkAppKey(key: string): string {
  if (key.length > 63 || !KEBAB_CASE.test(key)) throw invalidInput(`the app key must be kebab-case (lowercase letters and digits joined by single hyphens, at most 63 characters), not "${key}"`);
  return key;
}

const seg = encodeURIComponent;
const enrollments = (tenantId: string) => `/v4/data/resources/${seg(tenantId)}/${APP_OBJECT_TYPE}`;

/** A company tenant's apps over v4: the enrollments listed as resources, one found by key, creation, and storage for one. */
export function createVerticalsService(api: ApiClient) {
  return {
    async list(tenantId: string, limit: number): Promise<ResourcePage> {
      return (await api.request<ResourcePage>('GET', enrollments(tenantId), { query: { limit }, subject: `Tenant ${tenantId}` })).body;
    },

    /** The enrollment of `key` in the tenant; E202 when there is none. */
    async find(tenantId: string, key: string): Promise<AppResource> {
      const query = { limit: 1, where: JSON.stringify({ key }) };
      const page = (await api.request<{ data: AppResource[] }>('GET', enrollments(tenantId), { query, subject: `Tenant ${tenantId}` })).body;
      const found = page.data[0];
      if (!found) throw new CliError('E202', { resource: `App ${key} in tenant ${tenantId}` });
      return found;
    },

    async create(companyTenantId: string, fields: CreateAppFields): Promise<App> {
      const path = `/v4/platform/tenants/${seg(companyTenantId)}/apps`;
      return (await api.request<App>('POST', path, { body: snakeCaseFields(fields), subject: `Tenant ${companyTenantId}` })).body;
    },

    /**
     * Provisions the storage of an app: its child tenant's when the enrollment names one, else the
     * company tenant's (`tenantId`). Without `app` (not validated), the company tenant's.
     */
    async provision(tenantId: string, app: AppResource | undefined, input: { backend: string; dryRun: boolean; rebuildSearch: boolean }) {
      const target = app?.data.childTenantId ?? tenantId;
      const storage = await createStorageService(api).provision(target, input);
      return { tenantId: target, storage };
    },
  };
}
