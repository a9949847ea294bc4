import { z } from 'zod';

export const ObjectTypeNameSchema = z.string().min(1, 'is required').max(200, 'must be at most 200 characters');

export const ObjectTypeSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** JSON Schema of a resource's `data`. */
  schema: z.record(z.string(), z.unknown()),
  version: z.number().int(),
  /** A type every tenant has, rather than one of the tenant's own. */
  builtIn: z.boolean(),
  /** Set when only another service writes this type's resources: what writes them. */
  writtenThrough: z.string().nullable(),
  updatedAt: z.string(),
});
export type ObjectType = z.infer<typeof ObjectTypeSchema>;

export const ObjectTypeRefSchema = z.object({ name: ObjectTypeNameSchema });

export const ObjectTypeListSchema = z.object({ items: z.array(ObjectTypeSchema) });
export type ObjectTypeList = z.infer<typeof ObjectTypeListSchema>;
