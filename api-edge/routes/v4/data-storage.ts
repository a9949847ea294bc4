import { z } from 'zod';
import {
  BackendSelectionSchema,
  DoctorReportSchema,
  ProvisionInputSchema,
  ProvisionOutcomeSchema,
  StorageStatusSchema,
  SyncSchemaInputSchema,
  SyncSchemaOutcomeSchema,
} from '../../../control-plane/contracts.ts';
import { dryRunFlags, param, tenantPath } from '../params.ts';
import { bodyAndQueryOptions } from '../request-input.ts';
import { defineRoute } from '../route.ts';

const FLAGS = new Set(['dryRun', 'rebuildSearch']);

/**
 * `backend` as clients send it: the procedures' names and `mongodb`, which they take as
 * `documentdb`. The procedures' schemas normalise it before their enum, a step the OpenAPI
 * conversion cannot see, so the documents name it here.
 */
const ClientBackendSchema = z.enum([...BackendSelectionSchema.options, 'mongodb']).default('all').describe('`mongodb` is taken as `documentdb`');
const ProvisionBodySchema = ProvisionInputSchema.extend({ backend: ClientBackendSchema });
const SyncSchemaBodySchema = SyncSchemaInputSchema.extend({ backend: ClientBackendSchema });
/** Renamed to snake_case; the former names stay accepted (field-aliases.ts). */
const STORAGE_ALIASES = { dry_run: 'dryRun', rebuild_search: 'rebuildSearch' };

/**
 * v4 data: a tenant's storage. Status and doctor are reads; provision answers 200 when its workflow
 * finished within the bounded wait (or for a dry run) and 202 while it is still running.
 */
export const v4StorageRoutes = [
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/storage',
    procedure: 'storage.status',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: tenantPath },
    output: { 200: { description: 'Storage status', schema: StorageStatusSchema } },
    docs: { operationId: 'getStorageStatus', summary: "The tenant's storage backends", tag: 'Storage' },
    sample: {},
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), {}),
  }),
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/storage/doctor',
    procedure: 'storage.doctor',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: tenantPath },
    output: { 200: { description: 'The checks', schema: DoctorReportSchema } },
    docs: { operationId: 'checkStorage', summary: "Check the tenant's storage", tag: 'Storage' },
    sample: {},
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), {}),
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/storage/provision',
    procedure: 'storage.provision',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: tenantPath,
      query: { backend: param(ClientBackendSchema, { description: 'May be given in the body instead; `mongodb` is taken as `documentdb`' }), ...dryRunFlags, rebuild_search: ProvisionInputSchema.shape.rebuildSearch },
      body: { schema: ProvisionBodySchema, required: false },
    },
    output: {
      200: { description: 'Provisioning ended (or a dry run)', schema: ProvisionOutcomeSchema },
      202: { description: 'Provisioning is still running', schema: ProvisionOutcomeSchema },
    },
    docs: { operationId: 'provisionStorage', summary: "Provision the tenant's storage", tag: 'Storage' },
    aliases: STORAGE_ALIASES,
    sample: { query: 'dry_run=true', body: {} },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const outcome = await procedure.mutation(call(params.tenantId), bodyAndQueryOptions(request, body, FLAGS));
      set.status = outcome.state === 'running' ? 202 : 200;
      return outcome;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/storage/sync-schema',
    procedure: 'storage.syncSchema',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: tenantPath,
      query: { backend: param(ClientBackendSchema, { description: 'May be given in the body instead; `mongodb` is taken as `documentdb`' }), ...dryRunFlags },
      body: { schema: SyncSchemaBodySchema, required: false },
    },
    output: { 200: { description: 'The changes', schema: SyncSchemaOutcomeSchema } },
    docs: { operationId: 'syncStorageSchema', summary: "Bring the tenant's storage in line with its object types", tag: 'Storage' },
    aliases: { dry_run: 'dryRun' },
    sample: { query: 'dry_run=true', body: {} },
    handler: ({ request, params, body, call, procedure }) => procedure.mutation(call(params.tenantId), bodyAndQueryOptions(request, body, FLAGS)),
  }),
];
