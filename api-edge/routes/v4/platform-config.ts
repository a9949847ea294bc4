import {
  ConfigAuditPageSchema,
  ConfigEntrySchema,
  ConfigEnvironmentSchema,
  ConfigKeySchema,
  ConfigLabelSchema,
  ConfigSetSchema,
  ConfigSetSummarySchema,
  ConfigWriteOutcomeSchema,
  GetConfigInputSchema,
  ListConfigAuditInputSchema,
  PutConfigEntryInputSchema,
  WriteConfigBodySchema,
} from '../../../control-plane/contracts.ts';
import { listOf, param, tenantPath } from '../params.ts';
import { bodyAndQueryOptions, bodyWithPath } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/** The read's option, from the query string (`?include_secrets=true`). */
const GET_FLAGS = new Set(['include_secrets']);

const configSetPath = {
  ...tenantPath,
  label: param(ConfigLabelSchema, { description: "The app's label (its name)" }),
  environment: param(ConfigEnvironmentSchema, { description: 'The environment, such as dev' }),
};
const SET_SAMPLE = { label: 'route-case', environment: 'dev' };

/** No answer of the store is cached: it may hold secrets. */
const NO_STORE = 'no-store';

/**
 * v4 configuration store: a tenant's sets (an app's label and an environment), a set's entries
 * (secrets' values with `include_secrets=true`, for tenant administrators), one key set (201 when
 * new) or removed (204), several keys set and removed together, and the audit of changes.
 */
export const v4ConfigRoutes = [
  defineRoute({
    method: 'GET',
    path: '/platform/config/:tenantId',
    procedure: 'configStore.listSets',
    tenant: 'path',
    input: { path: tenantPath },
    output: { 200: { description: 'The sets, by label and environment', schema: listOf(ConfigSetSummarySchema) } },
    docs: {
      operationId: 'listConfigSets',
      summary: "The tenant's configuration sets: each app label and environment, with its counts",
      tag: 'Configuration',
      description: 'For members of the tenant (`resources.read`).',
    },
    sample: {},
    handler: async ({ request, params, set, call, procedure }) => {
      set.headers['cache-control'] = NO_STORE;
      return { data: await procedure.query(call(params.tenantId), bodyAndQueryOptions(request, undefined)) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/platform/config/:tenantId/audit',
    procedure: 'configStore.audit',
    tenant: 'path',
    input: {
      path: tenantPath,
      query: {
        label: ListConfigAuditInputSchema.shape.label,
        environment: ListConfigAuditInputSchema.shape.environment,
        key: ListConfigAuditInputSchema.shape.key,
        limit: ListConfigAuditInputSchema.shape.limit,
        offset: ListConfigAuditInputSchema.shape.offset,
      },
    },
    output: { 200: { description: 'A page of audit events', schema: ConfigAuditPageSchema } },
    docs: {
      operationId: 'listConfigAudit',
      summary: "The audit of the tenant's configuration, newest first",
      tag: 'Configuration',
      description:
        "For tenant administrators (`tenants.manage`). One event per key created, updated or deleted, and one per read of a set's secrets' values (`secrets_read`, no key): who, when, which key and whether it is a secret; never a value. A write that changes nothing leaves none.",
    },
    sample: {},
    handler: ({ request, params, set, call, procedure }) => {
      set.headers['cache-control'] = NO_STORE;
      return procedure.query(call(params.tenantId), bodyAndQueryOptions(request, undefined));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/platform/config/:tenantId/:label/:environment',
    procedure: 'configStore.get',
    tenant: 'path',
    input: {
      path: configSetPath,
      query: { include_secrets: param(GetConfigInputSchema.shape.include_secrets, { description: "`true`: secrets' values too" }) },
    },
    output: { 200: { description: 'The entries', schema: ConfigSetSchema } },
    docs: {
      operationId: 'getConfig',
      summary: "An app's configuration in one environment",
      tag: 'Configuration',
      description:
        "For members of the tenant (`resources.read`); entries by key. A secret's `value` is null unless `include_secrets=true`, which tenant administrators (`tenants.manage`) may ask for; that read is audited. A set without entries answers an empty list.",
    },
    sample: { params: SET_SAMPLE, query: 'include_secrets=true' },
    handler: ({ request, params, set, call, procedure }) => {
      set.headers['cache-control'] = NO_STORE;
      return procedure.query(call(params.tenantId), bodyWithPath(bodyAndQueryOptions(request, undefined, GET_FLAGS), { label: params.label, environment: params.environment }));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/platform/config/:tenantId/:label/:environment',
    procedure: 'configStore.write',
    tenant: 'path',
    input: { path: configSetPath, body: { schema: WriteConfigBodySchema } },
    output: { 200: { description: 'What was done to each key named', schema: ConfigWriteOutcomeSchema } },
    docs: {
      operationId: 'writeConfig',
      summary: "Set and remove keys of an app's configuration, all or none",
      tag: 'Configuration',
      description:
        "For tenant administrators (`tenants.manage`). Each entry of `entries` is set (`secret` omitted: as stored, and false for a new key; a secret is sealed with the operator's key at rest); each key of `remove` is removed, and one that does not exist refuses the whole write (404). A key whose value and flag are those stored is `unchanged`. At most 1000 entries per set.",
    },
    sample: { params: SET_SAMPLE, body: { entries: [{ key: 'ROUTE_CASE', value: 'route case' }] } },
    handler: ({ params, body, set, call, procedure }) => {
      set.headers['cache-control'] = NO_STORE;
      return procedure.mutation(call(params.tenantId), bodyWithPath(body, { label: params.label, environment: params.environment }));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/platform/config/:tenantId/:label/:environment/:key',
    procedure: 'configStore.put',
    tenant: 'path',
    input: { path: { ...configSetPath, key: ConfigKeySchema }, body: { schema: PutConfigEntryInputSchema.omit({ label: true, environment: true, key: true }) } },
    output: {
      200: { description: 'The key existed: changed, or the same', schema: ConfigEntrySchema },
      201: { description: 'The key was created', schema: ConfigEntrySchema },
    },
    docs: {
      operationId: 'putConfigEntry',
      summary: 'Set one configuration key',
      tag: 'Configuration',
      description: "For tenant administrators (`tenants.manage`). The answer never holds a secret's value.",
    },
    sample: { params: { ...SET_SAMPLE, key: 'ROUTE_CASE' }, body: { value: 'route case', secret: true } },
    handler: async ({ params, body, set, call, procedure }) => {
      const outcome = await procedure.mutation(call(params.tenantId), bodyWithPath(body, { label: params.label, environment: params.environment, key: params.key }));
      set.status = outcome.action === 'created' ? 201 : 200;
      set.headers['cache-control'] = NO_STORE;
      return outcome.entry;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/platform/config/:tenantId/:label/:environment/:key',
    procedure: 'configStore.remove',
    tenant: 'path',
    input: { path: { ...configSetPath, key: ConfigKeySchema } },
    output: { 204: { description: 'Removed' } },
    docs: { operationId: 'deleteConfigEntry', summary: 'Remove one configuration key', tag: 'Configuration', description: 'For tenant administrators (`tenants.manage`).' },
    sample: { params: { ...SET_SAMPLE, key: 'ROUTE_CASE' } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { label: params.label, environment: params.environment, key: params.key });
      set.status = 204;
      set.headers['cache-control'] = NO_STORE;
    },
  }),
];
