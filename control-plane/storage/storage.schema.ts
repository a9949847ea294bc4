import { z } from 'zod';
import { STORAGE_BACKENDS } from './storage.constants.ts';

export { STORAGE_BACKENDS };
export const StorageBackendSchema = z.enum(STORAGE_BACKENDS);
export type StorageBackend = z.infer<typeof StorageBackendSchema>;

export const BackendSelectionSchema = z.enum([...STORAGE_BACKENDS, 'all']);
export type BackendSelection = z.infer<typeof BackendSelectionSchema>;

/** `mongodb`, as clients may name the document store, is `documentdb`. */
const backendNamed = (name: unknown) => (name === 'mongodb' ? 'documentdb' : name);

/** A backend as a client names it: `mongodb` is accepted and normalised to `documentdb`. */
const clientBackend = <T extends z.ZodType>(schema: T) => z.preprocess(backendNamed, schema);

/**
 * The backends a list names (a Tenant's `storageBackends`), in provisioning order and once each:
 * `mongodb` is `documentdb`, `all` (or no list) is every backend; other names are left out.
 */
export function namedBackends(names: readonly string[] | undefined): StorageBackend[] {
  if (!names || names.includes('all')) return [...STORAGE_BACKENDS];
  const wanted = new Set(names.map(backendNamed));
  return STORAGE_BACKENDS.filter((backend) => wanted.has(backend));
}

/** What the `provisionStorage` workflow receives. */
export const ProvisionStorageRequestSchema = z.object({
  tenantId: z.string(),
  backend: BackendSelectionSchema,
  /** Several backends, in this order (the operator's, for those a Tenant declares); `backend` is then `all`. */
  backends: z.array(StorageBackendSchema).optional(),
  dryRun: z.boolean(),
  rebuildSearch: z.boolean(),
});
export type ProvisionStorageRequest = z.infer<typeof ProvisionStorageRequestSchema>;

export const STORAGE_STATUSES = ['not_provisioned', 'provisioning', 'ready', 'failed'] as const;
export type StorageStatusValue = (typeof STORAGE_STATUSES)[number];

/** Which physical location serves a backend for the tenant, and how the tenant is kept apart there. */
export const StorageLocationSchema = z.object({
  store: z.string(),
  database: z.string().optional(),
  schema: z.string().optional(),
  objects: z.array(z.string()).optional(),
  prefix: z.string().optional(),
  isolation: z.string(),
});
export type StorageLocation = z.infer<typeof StorageLocationSchema>;

export const StorageChangeSchema = z.object({
  backend: StorageBackendSchema,
  action: z.enum(['create', 'update', 'drop', 'rebuild', 'record']),
  object: z.enum(['routing', 'index', 'collection', 'area', 'projection']),
  name: z.string(),
  description: z.string(),
  objectType: z.string().optional(),
  field: z.string().optional(),
  count: z.number().int().optional(),
});
export type StorageChange = z.infer<typeof StorageChangeSchema>;

/** What `provisionStorage` returns: the changes it made (or, in a dry run, would make). */
export const ProvisionStorageResultSchema = z.object({
  tenantId: z.string(),
  backends: z.array(StorageBackendSchema),
  dryRun: z.boolean(),
  changes: z.array(StorageChangeSchema),
});
export type ProvisionStorageResult = z.infer<typeof ProvisionStorageResultSchema>;

export const BackendStatusSchema = z.object({
  backend: StorageBackendSchema,
  status: z.enum(STORAGE_STATUSES),
  location: StorageLocationSchema,
  provisionedAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
  error: z.string().nullable(),
});
export type BackendStatus = z.infer<typeof BackendStatusSchema>;

export const StorageStatusSchema = z.object({
  tenantId: z.string(),
  /** True when every backend is `ready`. */
  ready: z.boolean(),
  backends: z.array(BackendStatusSchema),
  /** The tenant's provisioning workflow and the status of its latest run (`null`: never run; `unknown`: engine unreachable). */
  workflow: z.object({ id: z.string(), status: z.string().nullable() }),
});
export type StorageStatus = z.infer<typeof StorageStatusSchema>;
/** The backends' state without the workflow run (which costs a call to Temporal). */
export type StorageReadiness = Omit<StorageStatus, 'workflow'>;

export const CHECK_RESULTS = ['ok', 'warn', 'fail'] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];

export const DoctorCheckSchema = z.object({
  backend: StorageBackendSchema,
  name: z.string(),
  result: z.enum(CHECK_RESULTS),
  message: z.string(),
  /** What to do about a `warn` or `fail`; `null` when the check is ok. */
  hint: z.string().nullable(),
});
export type DoctorCheck = z.infer<typeof DoctorCheckSchema>;

export const DoctorReportSchema = z.object({
  tenantId: z.string(),
  /** The worst result of any check. */
  result: z.enum(CHECK_RESULTS),
  summary: z.object({ ok: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
  checks: z.array(DoctorCheckSchema),
});
export type DoctorReport = z.infer<typeof DoctorReportSchema>;

/** Unknown keys are refused: a misspelt `dryRun` must not turn into a real run. */
export const ProvisionInputSchema = z
  .object({
    backend: clientBackend(BackendSelectionSchema).default('all'),
    dryRun: z.boolean().default(false),
    rebuildSearch: z.boolean().default(false),
  })
  .strict();
export type ProvisionInput = z.infer<typeof ProvisionInputSchema>;

export const PROVISION_STATES = ['planned', 'completed', 'running', 'failed', 'cancelled', 'timed_out'] as const;

export const ProvisionOutcomeSchema = z.object({
  tenantId: z.string(),
  backend: BackendSelectionSchema,
  dryRun: z.boolean(),
  rebuildSearch: z.boolean(),
  /** `null` for a dry run, which runs no workflow. */
  workflowId: z.string().nullable(),
  /** `planned` (dry run), `running` (still running after the bounded wait), or how the run ended. */
  state: z.enum(PROVISION_STATES),
  changes: z.array(StorageChangeSchema),
  error: z.string().nullable(),
  storage: StorageStatusSchema,
});
export type ProvisionOutcome = z.infer<typeof ProvisionOutcomeSchema>;

export const SyncSchemaInputSchema = z
  .object({
    backend: clientBackend(BackendSelectionSchema).default('all'),
    dryRun: z.boolean().default(false),
  })
  .strict();
export type SyncSchemaInput = z.infer<typeof SyncSchemaInputSchema>;

export const SkippedFieldSchema = z.object({ objectType: z.string(), field: z.string(), reason: z.string() });

export const SyncSchemaOutcomeSchema = z.object({
  tenantId: z.string(),
  backend: BackendSelectionSchema,
  dryRun: z.boolean(),
  changes: z.array(StorageChangeSchema),
  /** Fields marked indexed that cannot get an index, with the reason. */
  skipped: z.array(SkippedFieldSchema),
});
export type SyncSchemaOutcome = z.infer<typeof SyncSchemaOutcomeSchema>;
