import { z } from 'zod';
import { LimitSchema, limitDefaulting, OffsetSchema } from '../query/paging.ts';

/** Any name: one that no object type of the tenant has, whatever its form, is an unknown type (404). */
export const ResourceTypeNameSchema = z.string().min(1, 'is required').max(200, 'must be at most 200 characters');

/** Any string: an id that is not a UUID simply names no resource (404), like any unknown id. */
export const ResourceIdSchema = z.string().min(1);

export const ResourceDataSchema = z.record(z.string(), z.unknown());

export const ResourceSchema = z.object({
  id: z.string(),
  type: z.string(),
  data: ResourceDataSchema,
  version: z.number().int(),
  createdBy: z.string().nullable(),
  updatedBy: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Resource = z.infer<typeof ResourceSchema>;

/**
 * How a list counts its total: `estimated` (the default) counts exactly up to a bound
 * (`EXACT_TOTAL_BOUND`) and estimates past it; `exact` counts every matching row.
 */
export const CountModeSchema = z.enum(['exact', 'estimated']);

/** Whether a list's total is exact; the REST answers carry it only when false (the total is PostgreSQL's estimate). */
const TotalExactSchema = z
  .boolean()
  .optional()
  .describe('Present, and false, only when `total` is an estimate: more rows matched than an exact count by default covers (ask for `count=exact`)');

export const ListResourcesInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    /** v3 query filters keyed as sent: `status`, `budget.gte`, `metadata.priority.in`. */
    filter: z.record(z.string(), z.string()).default({}),
    /** v4 structured filter. */
    where: z.record(z.string(), z.unknown()).optional(),
    sort: z.string().max(500).optional(),
    limit: LimitSchema,
    offset: OffsetSchema.optional(),
    cursor: z.string().min(1).max(4096).optional(),
    count: CountModeSchema.optional(),
  })
  .refine((input) => input.cursor === undefined || input.offset === undefined, {
    path: ['cursor'],
    message: 'cannot be combined with offset',
  });
export type ListResourcesInput = z.input<typeof ListResourcesInputSchema>;

export { TotalExactSchema };

export const ResourcePageSchema = z.object({
  items: z.array(ResourceSchema),
  total: z.number().int(),
  totalExact: TotalExactSchema,
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type ResourcePage = z.infer<typeof ResourcePageSchema>;

export const ResourceRefSchema = z.object({ type: ResourceTypeNameSchema, id: ResourceIdSchema });

/** Which resource, which file property: what a file upload names beside the file's own name. */
export const FileRefSchema = z.object({ type: ResourceTypeNameSchema, id: ResourceIdSchema, property: z.string().min(1).max(100) });

export const CreateResourceInputSchema = z.object({ type: ResourceTypeNameSchema, data: ResourceDataSchema }).strict();

export const ReplaceResourceInputSchema = ResourceRefSchema.extend({
  data: ResourceDataSchema,
  /** When given, the write happens only if the stored version still equals it. */
  version: z.number().int().min(1).optional(),
});

export const UpdateResourceInputSchema = ResourceRefSchema.extend({
  /** JSON merge patch (RFC 7386): objects merge, `null` removes a field. */
  patch: ResourceDataSchema,
  version: z.number().int().min(1).optional(),
});

/** A version a client names in `If-Match`: a number, or `*` for whatever version is stored. */
const IfMatchSchema = z.union([z.number().int().min(1), z.literal('*')]);

/** v4 PUT: the data replaces the stored data only at the version named in the body or in `If-Match` (one is required). */
export const ReplaceAtVersionInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    id: ResourceIdSchema,
    data: ResourceDataSchema,
    version: z.number().int().min(1).optional(),
    ifMatch: IfMatchSchema.optional(),
  })
  .strict();
export type ReplaceAtVersionInput = z.infer<typeof ReplaceAtVersionInputSchema>;

/** DELETE: with `ifMatch`, only at that version. */
export const DeleteResourceInputSchema = ResourceRefSchema.extend({ ifMatch: IfMatchSchema.optional() });

/** v4 list: 1-based `page` (or an opaque `cursor`), `limit` 1-100 default 20, `sort` default `-created_at`, `where` as JSON. */
export const ListResourcePageInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    page: z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000')).optional(),
    limit: limitDefaulting(20),
    sort: z.string().max(500).optional(),
    where: z.record(z.string(), z.unknown()).optional(),
    cursor: z.string().min(1).max(4096).optional(),
    count: CountModeSchema.optional(),
  })
  .refine((input) => input.cursor === undefined || input.page === undefined, { path: ['cursor'], message: 'cannot be combined with page' });
export type ListResourcePageInput = z.infer<typeof ListResourcePageInputSchema>;

export const ResourceListPageSchema = z.object({
  items: z.array(ResourceSchema),
  total: z.number().int(),
  totalExact: TotalExactSchema,
  page: z.number().int(),
  limit: z.number().int(),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type ResourceListPage = z.infer<typeof ResourceListPageSchema>;

// History, batches and idempotency keys (resource-history.ts, resource-batches.ts, idempotency-keys.ts).

/** What a version of a resource records: how it came to be (`action`: an object type's action, named in `action`). */
export const ResourceVersionOperationSchema = z.enum(['create', 'update', 'delete', 'action']);
export type ResourceVersionOperation = z.infer<typeof ResourceVersionOperationSchema>;

/** One entry of a resource's history: its data after the change (a delete keeps the last data), who made it and when. */
export const ResourceVersionSchema = z.object({
  version: z.number().int(),
  operation: ResourceVersionOperationSchema,
  action: z.string().nullable(),
  data: ResourceDataSchema,
  by: z.string().nullable(),
  at: z.string(),
});
export type ResourceVersion = z.infer<typeof ResourceVersionSchema>;

const PageNumberSchema = z.preprocess(
  (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
  z.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000'),
);

export const ResourceHistoryInputSchema = z.object({ type: ResourceTypeNameSchema, id: ResourceIdSchema, page: PageNumberSchema.default(1), limit: limitDefaulting(20) }).strict();
export type ResourceHistoryInput = z.infer<typeof ResourceHistoryInputSchema>;

export const ResourceHistoryPageSchema = z.object({
  items: z.array(ResourceVersionSchema),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  hasMore: z.boolean(),
});
export type ResourceHistoryPage = z.infer<typeof ResourceHistoryPageSchema>;

/** The most items one batch takes. */
export const MAX_BATCH_ITEMS = 1000;

/**
 * An `Idempotency-Key`: a retry under the same key with the same input answers what the first
 * request answered, without doing it again. Printable ASCII, up to 255 characters.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');

const batchItems = <T extends z.ZodType>(item: T) =>
  z.array(item).min(1, 'must hold at least one item').max(MAX_BATCH_ITEMS, `must hold at most ${MAX_BATCH_ITEMS} items`);

export const IdempotentCreateInputSchema = CreateResourceInputSchema.extend({ idempotencyKey: IdempotencyKeySchema.optional() }).strict();
export type IdempotentCreateInput = z.infer<typeof IdempotentCreateInputSchema>;

/** Batch create: each item is the data of one new resource. */
export const BatchCreateInputSchema = z.object({ type: ResourceTypeNameSchema, items: batchItems(ResourceDataSchema), idempotencyKey: IdempotencyKeySchema.optional() }).strict();
export type BatchCreateInput = z.infer<typeof BatchCreateInputSchema>;

/** Batch update: each item replaces one resource's data at the version it names. */
export const BatchUpdateInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    items: batchItems(z.object({ id: ResourceIdSchema, data: ResourceDataSchema, version: z.number().int().min(1) }).strict()),
    idempotencyKey: IdempotencyKeySchema.optional(),
  })
  .strict();
export type BatchUpdateInput = z.infer<typeof BatchUpdateInputSchema>;

/** Batch delete: the ids of the resources to delete, each once. */
export const BatchDeleteInputSchema = z.object({ type: ResourceTypeNameSchema, ids: batchItems(ResourceIdSchema), idempotencyKey: IdempotencyKeySchema.optional() }).strict();
export type BatchDeleteInput = z.infer<typeof BatchDeleteInputSchema>;

export const BatchResourcesSchema = z.object({ items: z.array(ResourceSchema) });
export type BatchResources = z.infer<typeof BatchResourcesSchema>;

export const BatchDeletedSchema = z.object({ deleted: z.number().int() });
export type BatchDeleted = z.infer<typeof BatchDeletedSchema>;
