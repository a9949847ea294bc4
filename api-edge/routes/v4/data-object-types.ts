import { CreateObjectTypeInputSchema, ObjectTypeSchema, UpdateObjectTypeInputSchema } from '../../../control-plane/contracts.ts';
import { listOf, tenantField, tenantPath, tenantQuery } from '../params.ts';
import { jsonObjectBody, tenantOption } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** Renamed to snake_case; the former names stay accepted (field-aliases.ts). */
const OBJECT_TYPE_ALIASES = { search_fields: 'searchFields', file_properties: 'fileProperties' };

/**
 * v4 object types of a tenant: named by `tenant_id` in the query string or body, else the
 * caller's active tenant; and a tenant's published types by the tenant in the path.
 */
export const v4ObjectTypeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/data/resources/object-types',
    procedure: 'objectTypes.list',
    tenant: 'query',
    rateLimit: 'resources',
    input: { query: tenantQuery },
    output: { 200: { description: 'Object types', schema: listOf(ObjectTypeSchema) } },
    docs: { operationId: 'listObjectTypes', summary: "The tenant's object types", tag: 'Object types' },
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const { tenantId } = tenantOption(request, undefined);
      return { data: (await procedure.query(call(tenantId), undefined)).items };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/data/resources/object-types',
    procedure: 'objectTypes.create',
    tenant: 'query',
    rateLimit: 'resources',
    input: { query: tenantQuery, body: { schema: CreateObjectTypeInputSchema.extend(tenantField) } },
    output: { 201: { description: 'The object type', schema: ObjectTypeSchema } },
    docs: {
      operationId: 'createObjectType',
      summary: 'Create an object type',
      tag: 'Object types',
      description: 'A type may ask for at most 20 indexed fields (`indexes` and fields its schema marks `x-indexed`), and all of a tenant\'s types together for at most 50: beyond, 403 naming the limit.',
      errors: [409],
    },
    aliases: OBJECT_TYPE_ALIASES,
    sample: { body: { name: 'RouteCase', schema: { type: 'object' } } },
    handler: async ({ request, body, set, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      const created = await procedure.mutation(call(tenantId), jsonObjectBody(rest));
      set.status = 201;
      return created;
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/data/resources/object-types/:objectTypeId',
    procedure: 'objectTypes.update',
    tenant: 'query',
    rateLimit: 'resources',
    input: {
      path: { objectTypeId: UpdateObjectTypeInputSchema.shape.objectTypeId },
      query: tenantQuery,
      body: { schema: UpdateObjectTypeInputSchema.shape.changes.extend(tenantField) },
    },
    output: { 200: { description: 'The object type', schema: ObjectTypeSchema } },
    docs: {
      operationId: 'updateObjectType',
      summary: 'Change an object type',
      tag: 'Object types',
      description: 'Indexed fields are bounded as on create (20 per type, 50 per tenant): beyond, 403 naming the limit.',
      errors: [409],
    },
    aliases: OBJECT_TYPE_ALIASES,
    sample: { params: { objectTypeId: NIL_ID }, body: { status: 'draft' } },
    handler: async ({ request, params, body, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return procedure.mutation(call(tenantId), { objectTypeId: params.objectTypeId, changes: jsonObjectBody(rest) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/data/resources/schema/:tenantId',
    procedure: 'objectTypes.published',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: tenantPath },
    output: { 200: { description: 'Published object types', schema: listOf(ObjectTypeSchema) } },
    docs: { operationId: 'listPublishedObjectTypes', summary: "A tenant's published object types", tag: 'Object types' },
    sample: {},
    handler: async ({ params, call, procedure }) => ({
      data: (await procedure.query(call(params.tenantId), undefined)).items,
    }),
  }),
];
