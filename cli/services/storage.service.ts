import type { Answer } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';
import { PROVISION_BACKENDS, STORAGE_BACKENDS } from './storage.constants.ts';
import { snakeCaseFields } from './wire-fields.ts';

export { PROVISION_BACKENDS, STORAGE_BACKENDS };

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

    async syncSchema(tenantId: string, input: { backend?: string; dryRun: boolean }): Promise<SyncSchemaOutcome> {
      const body = { ...(input.backend ? { backend: input.backend } : {}), dry_run: input.dryRun };
      return (await api.request<SyncSchemaOutcome>('POST', `${base(tenantId)}/sync-schema`, { body, subject: subject(tenantId) })).body;
    },

    async provision(tenantId: string, input: { backend: string; dryRun: boolean; rebuildSearch: boolean }): Promise<ProvisionOutcome> {
      return (await api.request<ProvisionOutcome>('POST', `${base(tenantId)}/provision`, { body: snakeCaseFields(input), subject: subject(tenantId) })).body;
    },
  };
}

/** `GET .../storage`: each backend's state and where its data lives. */
export type StorageStatus = Answer<'getStorageStatus'>;
/** `GET .../storage/doctor`: a check per backend. */
export type DoctorReport = Answer<'checkStorage'>;
export type DoctorCheck = DoctorReport['checks'][number];
export type SyncSchemaOutcome = Answer<'syncStorageSchema'>;
export type ProvisionOutcome = Answer<'provisionStorage'>;
