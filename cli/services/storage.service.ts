import type { ApiClient } from './api-client.ts';

export const STORAGE_BACKENDS = ['postgresql', 'documentdb', 'blob', 'search'] as const;
/** What `provision storage` accepts; `mongodb` is the platform's other name for `documentdb`. */
export const PROVISION_BACKENDS = ['postgresql', 'mongodb', 'documentdb', 'blob', 'search', 'all'] as const;

const base = (tenantId: string) => `/v4/data/resources/${encodeURIComponent(tenantId)}/storage`;

/** A tenant's storage over v4: status, the doctor's checks, schema sync and provisioning, one call each. */
export function createStorageService(api: ApiClient) {
  const subject = (tenantId: string) => `Tenant ${tenantId}`;
  return {
    async status(tenantId: string): Promise<StorageStatus> {
      return (await api.request<StorageStatus>('GET', base(tenantId), { subject: subject(tenantId) })).body;
    },

    async doctor(tenantId: string): Promise<DoctorReport> {
      return (await api.request<DoctorReport>('GET', `${base(tenantId)}/doctor`, { subject: subject(tenantId) })).body;
    },

    async syncSchema(tenantId: string, input: { backend?: string; dryRun: boolean }): Promise<Record<string, unknown>> {
      const body = { ...(input.backend ? { backend: input.backend } : {}), dryRun: input.dryRun };
      return (await api.request<Record<string, unknown>>('POST', `${base(tenantId)}/sync-schema`, { body, subject: subject(tenantId) })).body;
    },

    async provision(tenantId: string, input: { backend: string; dryRun: boolean; rebuildSearch: boolean }): Promise<Record<string, unknown>> {
      return (await api.request<Record<string, unknown>>('POST', `${base(tenantId)}/provision`, { body: input, subject: subject(tenantId) })).body;
    },
  };
}

/** `GET .../storage`: each backend's state and where its data lives. */
export interface StorageStatus {
  tenantId: string;
  ready: boolean;
  backends: Array<{
    backend: string;
    status: string;
    location: { store?: string; isolation?: string; [field: string]: unknown } | null;
    provisionedAt: string | null;
    updatedAt: string | null;
    error: string | null;
  }>;
  workflow?: { id: string; status: string | null };
}

export interface DoctorCheck {
  backend: string;
  name: string;
  result: 'ok' | 'warn' | 'fail';
  message: string;
  hint: string | null;
}

export interface DoctorReport {
  tenantId: string;
  result: 'ok' | 'warn' | 'fail';
  summary: { ok: number; warn: number; fail: number };
  checks: DoctorCheck[];
}
