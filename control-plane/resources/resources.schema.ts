import { z } from 'zod';
import { LimitSchema, OffsetSchema } from '../query/paging.ts';

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
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Resource = z.infer<typeof ResourceSchema>;

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
  })
  .refine((input) => input.cursor === undefined || input.offset === undefined, {
    path: ['cursor'],
    message: 'cannot be combined with offset',
  });
export type ListResourcesInput = z.input<typeof ListResourcesInputSchema>;

export const ResourcePageSchema = z.object({
  items: z.array(ResourceSchema),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type ResourcePage = z.infer<typeof ResourcePageSchema>;

export const ResourceRefSchema = z.object({ type: ResourceTypeNameSchema, id: ResourceIdSchema });

export const CreateResourceInputSchema = z.object({ type: ResourceTypeNameSchema, data: ResourceDataSchema });

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
