import { z } from 'zod';

/** Most entries one configuration set (a tenant's app label and environment) holds. */
export const MAX_ENTRIES_PER_SET = 1000;
/** Most entries one write names (set and removed together). */
export const MAX_ENTRIES_PER_WRITE = 500;
/** Longest value, in characters. */
export const MAX_VALUE_LENGTH = 32_768;

/** Names an app (`my-app`) or an environment (`dev`): lower case letters, digits, `.`, `_` and `-`. */
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const nameOf = (what: string) =>
  z
    .string({ error: 'is required' })
    .regex(NAME, `must be ${what}: 1 to 63 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit`);

export const LabelSchema = nameOf("an app's label, such as my-app");
export const EnvironmentSchema = nameOf('an environment, such as dev');
/** An environment variable's name, as `.env.local` holds it. */
export const ConfigKeySchema = z
  .string({ error: 'is required' })
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name: letters, digits and "_", not starting with a digit, at most 128 characters');
export const ConfigValueSchema = z.string({ error: 'must be a string' }).max(MAX_VALUE_LENGTH, `must be at most ${MAX_VALUE_LENGTH} characters`);

/** A flag from JSON or from a query string (`include_secrets=true`). */
const flag = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean({ error: 'must be true or false' }));

/** A whole number from a query string (`limit=20`) or JSON. */
const wholeNumber = (min: number, max: number, fallback: number) =>
  z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
      z.number({ error: 'must be a whole number' }).int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
    )
    .default(fallback);

const SetRefShape = { label: LabelSchema, environment: EnvironmentSchema };

/** `GET /v4/platform/config/{tenantId}/{label}/{environment}`. */
export const GetConfigInputSchema = z
  .object({
    ...SetRefShape,
    /** Secrets' values too (tenant administrators only; the read is audited). Without it, a secret's `value` is null. */
    include_secrets: flag.default(false),
  })
  .strict();
export type GetConfigInput = z.infer<typeof GetConfigInputSchema>;

/** `PUT /v4/platform/config/{tenantId}/{label}/{environment}/{key}`. */
export const PutConfigEntryInputSchema = z
  .object({
    ...SetRefShape,
    key: ConfigKeySchema,
    value: ConfigValueSchema,
    /** Whether the value is a secret (sealed at rest, hidden unless asked for); omitted: as stored, and false for a new key. */
    secret: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();
export type PutConfigEntryInput = z.infer<typeof PutConfigEntryInputSchema>;

/** `DELETE /v4/platform/config/{tenantId}/{label}/{environment}/{key}`. */
export const ConfigEntryRefSchema = z.object({ ...SetRefShape, key: ConfigKeySchema }).strict();
export type ConfigEntryRef = z.infer<typeof ConfigEntryRefSchema>;

export const ConfigEntryWriteSchema = z
  .object({ key: ConfigKeySchema, value: ConfigValueSchema, secret: PutConfigEntryInputSchema.shape.secret })
  .strict();

const WriteConfigFields = z
  .object({
    entries: z.array(ConfigEntryWriteSchema).max(MAX_ENTRIES_PER_WRITE, `must hold at most ${MAX_ENTRIES_PER_WRITE} entries`).default([]),
    remove: z.array(ConfigKeySchema).max(MAX_ENTRIES_PER_WRITE, `must name at most ${MAX_ENTRIES_PER_WRITE} keys`).default([]),
  })
  .strict();

/** Each key named once, and at least one. */
function checkWrite(input: z.infer<typeof WriteConfigFields>, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  input.entries.forEach((entry, i) => {
    if (seen.has(entry.key)) ctx.addIssue({ code: 'custom', path: ['entries', i, 'key'], message: `names ${entry.key} twice` });
    seen.add(entry.key);
  });
  input.remove.forEach((key, i) => {
    if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['remove', i], message: `names ${key}, which entries sets` });
  });
  if (input.entries.length + input.remove.length === 0) ctx.addIssue({ code: 'custom', path: ['entries'], message: 'must set or remove at least one key' });
}

/** The body of `PATCH /v4/platform/config/{tenantId}/{label}/{environment}`: entries set and keys removed, all or none. */
export const WriteConfigBodySchema = WriteConfigFields.superRefine(checkWrite);
export const WriteConfigInputSchema = WriteConfigFields.extend(SetRefShape).superRefine(checkWrite);
export type WriteConfigInput = z.infer<typeof WriteConfigInputSchema>;

/** `GET /v4/platform/config/{tenantId}/audit`: newest first. */
export const ListConfigAuditInputSchema = z
  .object({
    label: LabelSchema.optional(),
    environment: EnvironmentSchema.optional(),
    key: ConfigKeySchema.optional(),
    limit: wholeNumber(1, 100, 20),
    offset: wholeNumber(0, 100_000, 0),
  })
  .strict();
export type ListConfigAuditInput = z.infer<typeof ListConfigAuditInputSchema>;

export const ConfigEntrySchema = z.object({
  key: z.string(),
  /** Null for a secret unless its value was asked for. */
  value: z.string().nullable(),
  secret: z.boolean(),
  /** 1 when created, one more on each change. */
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  updated_by: z.string().nullable(),
});
export type ConfigEntry = z.infer<typeof ConfigEntrySchema>;

export const ConfigSetSchema = z.object({
  tenant_id: z.string(),
  label: z.string(),
  environment: z.string(),
  /** Whether secrets' values are in this answer. */
  secrets_included: z.boolean(),
  /** By key. */
  data: z.array(ConfigEntrySchema),
});
export type ConfigSet = z.infer<typeof ConfigSetSchema>;

export const ConfigSetSummarySchema = z.object({
  label: z.string(),
  environment: z.string(),
  entries: z.number().int(),
  secrets: z.number().int(),
  updated_at: z.string(),
});
export type ConfigSetSummary = z.infer<typeof ConfigSetSummarySchema>;

export const CONFIG_CHANGE_ACTIONS = ['created', 'updated', 'unchanged', 'deleted'] as const;

/** What a write did to each key it named. */
export const ConfigWriteOutcomeSchema = z.object({
  tenant_id: z.string(),
  label: z.string(),
  environment: z.string(),
  changes: z.array(z.object({ key: z.string(), action: z.enum(CONFIG_CHANGE_ACTIONS), secret: z.boolean(), version: z.number().int().nullable() })),
});
export type ConfigWriteOutcome = z.infer<typeof ConfigWriteOutcomeSchema>;

/** One entry written by `PUT`, and whether it was new (201) or changed or the same (200). */
export const PutConfigEntryOutcomeSchema = z.object({ entry: ConfigEntrySchema, action: z.enum(CONFIG_CHANGE_ACTIONS) });

export const CONFIG_AUDIT_ACTIONS = ['created', 'updated', 'deleted', 'secrets_read'] as const;

export const ConfigAuditEventSchema = z.object({
  id: z.string(),
  label: z.string(),
  environment: z.string(),
  /** Null for a read of the set's secrets. */
  key: z.string().nullable(),
  action: z.enum(CONFIG_AUDIT_ACTIONS),
  secret: z.boolean().nullable(),
  actor_id: z.string().nullable(),
  actor_email: z.string().nullable(),
  at: z.string(),
});
export type ConfigAuditEvent = z.infer<typeof ConfigAuditEventSchema>;

export const ConfigAuditPageSchema = z.object({ data: z.array(ConfigAuditEventSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
export type ConfigAuditPage = z.infer<typeof ConfigAuditPageSchema>;
