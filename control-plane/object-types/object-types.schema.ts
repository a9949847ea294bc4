import { z } from 'zod';

/** Any name: one that no object type of the tenant has is an unknown type (404). */
export const ObjectTypeNameSchema = z.string().min(1, 'is required').max(200, 'must be at most 200 characters');

/** Keys that name routes beside a type's resources (`/v4/data/resources/{tenantId}/storage`), never a type. */
export const RESERVED_KEYS = ['storage', 'query', 'search', 'object-types', 'schema'] as const;

const PASCAL_NAME = /^[A-Z][A-Za-z0-9]{0,99}$/;
const KEBAB_KEY = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_-]{0,63}(\.[A-Za-z_][A-Za-z0-9_-]{0,63}){0,7}$/;
const ACTION_NAME = /^[a-z][a-zA-Z0-9_-]{0,62}$/;
const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const MEDIA_TYPE = /^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/;

/** The kebab-case key a PascalCase name gets when none is given: `PurchaseOrder` -> `purchase-order`. */
export const keyOf = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])([A-Z][a-z])/g, '$1-$2').toLowerCase();

export const ObjectTypeKeySchema = z
  .string()
  .max(100, 'must be at most 100 characters')
  .regex(KEBAB_KEY, 'must be kebab-case (purchase-order)')
  .refine((key) => !(RESERVED_KEYS as readonly string[]).includes(key), 'names a route of the data API and cannot be a type key');

const FieldPathSchema = z.string().regex(FIELD_PATH, 'must be a field path such as amount or customer.name');

/** A JSON Schema (2020-12) for a resource's `data`: an object schema. */
export const DataSchemaSchema = z
  .record(z.string(), z.unknown())
  .refine((schema) => schema.type === 'object', { message: 'must describe an object ("type": "object")' });

export const ActionSchema = z
  .object({
    /** The values a field must hold for the action to apply: `{"status": ["draft", "sent"]}`. */
    from: z.record(FieldPathSchema, z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).min(1).max(100)).optional(),
    /** The fields the action sets: `{"status": "paid"}`. */
    set: z.record(FieldPathSchema, z.unknown()).optional(),
    /** An orchestrate workflow to start with the resource as input. */
    workflow: z.string().min(1).max(100).optional(),
  })
  .strict()
  .refine((action) => action.set !== undefined || action.workflow !== undefined, { message: 'must set fields or start a workflow' });
export type Action = z.infer<typeof ActionSchema>;

export const FilePropertySchema = z
  .object({
    /** Largest file in bytes (at most 100 MB). */
    maxSize: z.number().int().min(1).max(100 * 1024 * 1024),
    /** Media types accepted (`application/pdf`, `image/*`). */
    contentTypes: z.array(z.string().max(255).regex(MEDIA_TYPE, 'must be a media type such as application/pdf or image/*')).min(1).max(50),
  })
  .strict();
export type FileProperty = z.infer<typeof FilePropertySchema>;

export const ObjectTypeStatusSchema = z.enum(['draft', 'published']);

/** What an object type declares beside its schema. */
const ObjectTypeMetadataShape = {
  /** Fields the tenant's lists filter or sort on, served by indexes. */
  indexes: z.array(FieldPathSchema).max(20),
  /** Fields projected for search. */
  searchFields: z.array(FieldPathSchema).max(50),
  actions: z.record(z.string().regex(ACTION_NAME, 'must be an action name such as approve'), ActionSchema).refine((a) => Object.keys(a).length <= 50, 'may declare at most 50 actions'),
  fileProperties: z
    .record(z.string().regex(PROPERTY_NAME, 'must be a property name such as attachment'), FilePropertySchema)
    .refine((f) => Object.keys(f).length <= 20, 'may declare at most 20 file properties'),
};

/**
 * Where a type's declared indexes stand: `ready` (every one built), `building` (in the background,
 * writes going on), `pending` (not started, or interrupted) or `failed` (`error` says why); `pending`
 * names the fields still waiting, `skipped` the declared fields that cannot be indexed and why.
 */
export const IndexBuildSchema = z.object({
  state: z.enum(['ready', 'building', 'pending', 'failed']),
  pending: z.array(z.string()),
  skipped: z.array(z.string()),
  error: z.string().nullable(),
});
export type IndexBuild = z.infer<typeof IndexBuildSchema>;

export const ObjectTypeSchema = z.object({
  objectTypeId: z.string(),
  /** Kebab-case: the `{objectType}` of resource paths and a resource's `type`. */
  key: z.string(),
  /** PascalCase; it resolves in paths too. */
  name: z.string(),
  schema: z.record(z.string(), z.unknown()),
  status: ObjectTypeStatusSchema,
  version: z.number().int(),
  /** A type every tenant has, rather than one of the tenant's own. */
  builtIn: z.boolean(),
  /** Set when only another service writes this type's resources: what writes them. */
  writtenThrough: z.string().nullable(),
  ...ObjectTypeMetadataShape,
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Where its declared indexes stand (one type's GET, create and update answer it). */
  indexBuild: IndexBuildSchema.optional(),
});
export type ObjectType = z.infer<typeof ObjectTypeSchema>;

export const ObjectTypeRefSchema = z.object({ name: ObjectTypeNameSchema });

export const ObjectTypeListSchema = z.object({ items: z.array(ObjectTypeSchema) });
export type ObjectTypeList = z.infer<typeof ObjectTypeListSchema>;

export const CreateObjectTypeInputSchema = z
  .object({
    name: z.string().regex(PASCAL_NAME, 'must be PascalCase (PurchaseOrder)'),
    key: ObjectTypeKeySchema.optional(),
    schema: DataSchemaSchema,
    status: ObjectTypeStatusSchema.default('published'),
    indexes: ObjectTypeMetadataShape.indexes.default([]),
    searchFields: ObjectTypeMetadataShape.searchFields.default([]),
    actions: ObjectTypeMetadataShape.actions.default({}),
    fileProperties: ObjectTypeMetadataShape.fileProperties.default({}),
  })
  .strict();
export type CreateObjectTypeInput = z.infer<typeof CreateObjectTypeInputSchema>;

export const UpdateObjectTypeInputSchema = z.object({
  objectTypeId: z.string().min(1),
  changes: z
    .object({
      name: z.string().regex(PASCAL_NAME, 'must be PascalCase (PurchaseOrder)').optional(),
      schema: DataSchemaSchema.optional(),
      status: ObjectTypeStatusSchema.optional(),
      indexes: ObjectTypeMetadataShape.indexes.optional(),
      searchFields: ObjectTypeMetadataShape.searchFields.optional(),
      actions: ObjectTypeMetadataShape.actions.optional(),
      fileProperties: ObjectTypeMetadataShape.fileProperties.optional(),
    })
    .strict(),
});
export type UpdateObjectTypeInput = z.infer<typeof UpdateObjectTypeInputSchema>;
