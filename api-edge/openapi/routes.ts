import { z } from 'zod';
import {
  ActionResultSchema,
  CreateDatasetInputSchema,
  DatasetRefSchema,
  DatasetSchema,
  FeatureCollectionInputSchema,
  FeaturePageSchema,
  IngestOutcomeSchema,
  NearbyPlacesSchema,
  QueryFeaturesInputSchema,
  ResolvedLocationsSchema,
  ResolveLocationInputSchema,
  ReverseInputSchema,
  AggregateResourcesInputSchema,
  AggregateResultSchema,
  ApplyActionInputSchema,
  AppSchema,
  ChatEventSchema,
  ConversationListSchema,
  ConversationMessagesSchema,
  ReadinessInputSchema,
  ReadinessSchema,
  ResumeChatInputSchema,
  RuntimeRequestInputSchema,
  RuntimeRequestSchema,
  SendChatInputSchema,
  WorkflowChatAnswerSchema,
  WorkflowChatBodySchema,
  WorkflowChatInputSchema,
  WorkflowStatusInputSchema,
  WorkflowStatusSchema,
  BatchCreateInputSchema,
  BatchDeletedSchema,
  BatchDeleteInputSchema,
  BatchResourcesSchema,
  BatchUpdateInputSchema,
  CapabilitySchema,
  CatalogSchema,
  EvaluateInputSchema,
  EvaluationSchema,
  IdempotencyKeySchema,
  OverrideInputSchema,
  OverrideSchema,
  QueryResourcesInputSchema,
  ResourceHistoryInputSchema,
  ResourceHistoryPageSchema,
  ResourceQueryPageSchema,
  SetPlanInputSchema,
  TenantPlanSchema,
  CreateAppInputSchema,
  CreateChildTenantInputSchema,
  CreateObjectTypeInputSchema,
  CreateResourceInputSchema,
  CreateRootTenantInputSchema,
  DoctorReportSchema,
  ExecuteInputSchema,
  ExecutionRefSchema,
  FileRefSchema,
  FindUserByEmailInputSchema,
  ListExecutionsInputSchema,
  ListResourcePageInputSchema,
  ListResourcesInputSchema,
  ListUsersInputSchema,
  MeSchema,
  MembershipSchema,
  ObjectTypeSchema,
  PlatformUserSchema,
  ProvisionInputSchema,
  ProvisionOutcomeSchema,
  ProvisionSelfInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceDataSchema,
  ResourceListPageSchema,
  ResourceRefSchema,
  ResourceSchema,
  StorageStatusSchema,
  SyncSchemaInputSchema,
  SyncSchemaOutcomeSchema,
  TenantMembershipSchema,
  TenantRefSchema,
  TenantSchema,
  UpdateObjectTypeInputSchema,
  UpdateProfileInputSchema,
  UpdateUserInputSchema,
  UploadMetaSchema,
  UserRefInputSchema,
  UserRefSchema,
  UserSchema,
} from '../../control-plane/contracts.ts';
import { V3_BASE, V4_BASE } from '../routes/bases.ts';
import { V3ExecutionPageSchema, V3ExecutionSchema, V3ResourcePageSchema, V3ResourceSchema, V3UserPageSchema, V3WorkflowListSchema } from '../routes/v3/shape.ts';

/**
 * What the OpenAPI documents (api-edge/openapi/document.ts) say of each route the edge serves,
 * keyed `METHOD /path/:param` exactly as `apiRouteTable()` names it. Every schema is one a
 * procedure validates with (its input) or returns (its output), or the REST shape the edge builds
 * from it; nothing here is JSON written by hand. A route the edge serves without an entry here
 * fails api-edge/openapi/openapi.test.ts.
 */

/** A path, query or header parameter: its schema (the procedure's), and how it is written. */
export interface ParamDoc {
  schema: z.ZodType;
  description?: string;
  required?: boolean;
  /** The value is JSON text (`where={"status":"paid"}`). */
  json?: boolean;
  /** `filter[field]=value`: an object written as several parameters. */
  deepObject?: boolean;
}

export interface ResponseDoc {
  description: string;
  /** The JSON body; none for 204 and 304. */
  schema?: z.ZodType;
  /** A `text/event-stream` body whose `data:` lines hold JSON of this schema (and, with `done`, the literal `[DONE]` last). */
  events?: z.ZodType;
  done?: boolean;
  /** Carries `X-Conversation-Id` and `X-Message-Id` (chat streams). */
  streamIds?: boolean;
  /** The body is a file's bytes, of the file's own media type. */
  binary?: boolean;
  /** Carries the resource's version as `ETag`. */
  etag?: boolean;
}

export interface RouteDoc {
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  /** Every `:param` of the route, by name. */
  path?: Record<string, z.ZodType | ParamDoc>;
  query?: Record<string, z.ZodType | ParamDoc>;
  headers?: Record<string, z.ZodType | ParamDoc>;
  /** A JSON body (`required` unless said otherwise), or the bytes of a file. */
  body?: { schema: z.ZodType; required?: boolean; description?: string } | { binary: true; description: string };
  responses: Record<number, ResponseDoc>;
  /** Error statuses beyond those every route may answer (400, 401, 403, 404, 429, 500; 413 with a body method). */
  errors?: number[];
}

const param = (schema: z.ZodType, extra: Omit<ParamDoc, 'schema'> = {}): ParamDoc => ({ schema, ...extra });
const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

/** A resource's version, as `ETag` sends it and the conditional headers name it (`"3"`, or `*`). */
const EntityTag = z.string();
const tenantPath = { tenantId: param(TenantRefSchema, { description: 'Tenant id or slug' }) };
const tenantQuery = { tenant_id: param(TenantRefSchema, { description: "Tenant id or slug; default: the caller's active tenant" }) };
const dryRunFlags = {
  dryRun: param(ProvisionInputSchema.shape.dryRun, { description: 'May be given in the body instead' }),
};
const resourcePath = { ...tenantPath, objectType: param(ResourceRefSchema.shape.type, { description: 'The object type, by key or PascalCase name' }), id: ResourceRefSchema.shape.id };
const filePath = { ...resourcePath, propertyName: param(FileRefSchema.shape.property, { description: 'A file property the object type declares' }) };
const membership = { 200: { description: 'The membership existed', schema: MembershipSchema }, 201: { description: 'The membership was created', schema: MembershipSchema } };

export const V3_ROUTE_DOCS: Record<string, RouteDoc> = {
  [`GET ${V3_BASE}/resources`]: {
    operationId: 'listResources',
    summary: 'List resources of a type',
    tag: 'Resources',
    query: {
      type: param(ListResourcesInputSchema.shape.type, { required: true }),
      filter: param(ListResourcesInputSchema.shape.filter, { deepObject: true, description: '`filter[field]=value`, `filter[field.gte]=`, `filter[field.in]=a,b`' }),
      sort: param(ListResourcesInputSchema.shape.sort, { description: 'Fields, `-` for descending: `-createdAt,name`' }),
      limit: ListResourcesInputSchema.shape.limit,
      offset: ListResourcesInputSchema.shape.offset,
      cursor: param(ListResourcesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`; not with `offset`" }),
    },
    responses: { 200: { description: 'A page of resources', schema: V3ResourcePageSchema } },
  },
  [`GET ${V3_BASE}/resources/:type/:id`]: {
    operationId: 'getResource',
    summary: 'Get a resource',
    tag: 'Resources',
    path: ResourceRefSchema.shape,
    responses: { 200: { description: 'The resource', schema: V3ResourceSchema } },
  },
  [`POST ${V3_BASE}/resources/:type`]: {
    operationId: 'createResource',
    summary: 'Create a resource',
    tag: 'Resources',
    path: { type: ResourceRefSchema.shape.type },
    body: { schema: ResourceDataSchema, description: "The resource's fields; `id`, `type`, `createdAt`, `updatedAt` and `version` are ignored" },
    responses: { 201: { description: 'The created resource', schema: V3ResourceSchema } },
    errors: [409],
  },
  [`PUT ${V3_BASE}/resources/:type/:id`]: {
    operationId: 'replaceResource',
    summary: 'Replace a resource',
    tag: 'Resources',
    path: ResourceRefSchema.shape,
    body: { schema: ResourceDataSchema, description: "The resource's new fields" },
    responses: { 200: { description: 'The replaced resource', schema: V3ResourceSchema } },
    errors: [409],
  },
  [`PATCH ${V3_BASE}/resources/:type/:id`]: {
    operationId: 'updateResource',
    summary: 'Update a resource',
    tag: 'Resources',
    path: ResourceRefSchema.shape,
    body: { schema: ResourceDataSchema, description: 'A JSON merge patch (RFC 7386): objects merge, `null` removes a field' },
    responses: { 200: { description: 'The updated resource', schema: V3ResourceSchema } },
    errors: [409],
  },
  [`DELETE ${V3_BASE}/resources/:type/:id`]: {
    operationId: 'deleteResource',
    summary: 'Delete a resource',
    tag: 'Resources',
    path: ResourceRefSchema.shape,
    responses: { 204: { description: 'Deleted' } },
    errors: [409],
  },
  [`GET ${V3_BASE}/users/me`]: {
    operationId: 'getCurrentUser',
    summary: 'The caller in the tenant',
    tag: 'Users',
    responses: { 200: { description: 'The caller', schema: UserSchema } },
  },
  [`GET ${V3_BASE}/users/:id`]: {
    operationId: 'getUser',
    summary: 'Get a member of the tenant',
    tag: 'Users',
    path: UserRefInputSchema.shape,
    responses: { 200: { description: 'The user', schema: UserSchema } },
  },
  [`GET ${V3_BASE}/users`]: {
    operationId: 'listUsers',
    summary: 'List members of the tenant',
    tag: 'Users',
    query: ListUsersInputSchema.shape,
    responses: { 200: { description: 'A page of users', schema: V3UserPageSchema } },
  },
  [`PATCH ${V3_BASE}/users/:id`]: {
    operationId: 'updateUser',
    summary: "Update a user's name or preferences",
    tag: 'Users',
    path: { id: param(UpdateUserInputSchema.shape.id, { description: 'A user id, or `me`' }) },
    body: { schema: UpdateUserInputSchema.shape.changes },
    responses: { 200: { description: 'The updated user', schema: UserSchema } },
  },
  [`GET ${V3_BASE}/orchestrate/workflows`]: {
    operationId: 'listWorkflows',
    summary: 'List workflow definitions',
    tag: 'Orchestrate',
    responses: { 200: { description: 'The workflows', schema: V3WorkflowListSchema } },
  },
  [`POST ${V3_BASE}/orchestrate/workflows/:workflowId/execute`]: {
    operationId: 'executeWorkflow',
    summary: 'Execute a workflow',
    tag: 'Orchestrate',
    description: 'With `async` false (the default) the answer waits a bounded time for the execution to end.',
    path: { workflowId: ExecuteInputSchema.shape.workflowId },
    body: { schema: ExecuteInputSchema.omit({ workflowId: true }), required: false },
    responses: {
      200: { description: 'The execution ended', schema: V3ExecutionSchema },
      202: { description: 'The execution is still running', schema: V3ExecutionSchema },
    },
  },
  [`GET ${V3_BASE}/orchestrate/executions/:id`]: {
    operationId: 'getExecution',
    summary: 'Get an execution',
    tag: 'Orchestrate',
    path: ExecutionRefSchema.shape,
    responses: { 200: { description: 'The execution', schema: V3ExecutionSchema } },
  },
  [`GET ${V3_BASE}/orchestrate/executions`]: {
    operationId: 'listExecutions',
    summary: 'List executions',
    tag: 'Orchestrate',
    query: ListExecutionsInputSchema.shape,
    responses: { 200: { description: 'A page of executions', schema: V3ExecutionPageSchema } },
  },
  [`POST ${V3_BASE}/orchestrate/executions/:id/cancel`]: {
    operationId: 'cancelExecution',
    summary: 'Cancel an execution',
    tag: 'Orchestrate',
    description: 'Cancelling an execution that already ended changes nothing.',
    path: ExecutionRefSchema.shape,
    responses: { 204: { description: 'Cancelled' } },
  },
  [`POST ${V3_BASE}/chat`]: {
    operationId: 'sendChatMessage',
    summary: 'Ask a question and stream the answer (server-sent events)',
    tag: 'Chat',
    description:
      'Send `Accept: text/event-stream`. A refusal (400, 403, 404, 429) is a JSON answer before any stream starts. Each event has an `id` (its number in the answer, for `Last-Event-ID`); comment lines keep an idle stream open. The answer goes on being produced when the client leaves: resume it with `GET /chat/conversations/{conversationId}/messages/{messageId}/events`.',
    body: { schema: SendChatInputSchema },
    responses: { 200: { description: 'The answer as it is produced: `status`, `message`, `citation`, then `done` or `error`', events: ChatEventSchema, streamIds: true } },
  },
  [`GET ${V3_BASE}/chat/conversations`]: {
    operationId: 'listConversations',
    summary: "The caller's conversations, most recently active first",
    tag: 'Chat',
    responses: { 200: { description: 'Conversations', schema: ConversationListSchema } },
  },
  [`GET ${V3_BASE}/chat/conversations/:conversationId`]: {
    operationId: 'getConversation',
    summary: 'A conversation of the caller with its messages',
    tag: 'Chat',
    path: { conversationId: ResumeChatInputSchema.shape.conversationId },
    responses: { 200: { description: 'The conversation; assistant messages carry their citations', schema: ConversationMessagesSchema } },
  },
  [`DELETE ${V3_BASE}/chat/conversations/:conversationId`]: {
    operationId: 'deleteConversation',
    summary: 'Delete a conversation of the caller',
    tag: 'Chat',
    path: { conversationId: ResumeChatInputSchema.shape.conversationId },
    responses: { 204: { description: 'Deleted' } },
  },
  [`GET ${V3_BASE}/chat/conversations/:conversationId/messages/:messageId/events`]: {
    operationId: 'resumeChatAnswer',
    summary: 'Resume an answer: replay the events after Last-Event-ID, then follow the rest',
    tag: 'Chat',
    path: { conversationId: ResumeChatInputSchema.shape.conversationId, messageId: ResumeChatInputSchema.shape.messageId },
    headers: { 'Last-Event-ID': param(ResumeChatInputSchema.shape.lastEventId, { description: 'The id of the last event the client has; none: from the start' }) },
    responses: { 200: { description: "The answer's events after Last-Event-ID, until `done` or `error`", events: ChatEventSchema, streamIds: true } },
  },
};

export const V4_ROUTE_DOCS: Record<string, RouteDoc> = {
  [`GET ${V4_BASE}/identity/me`]: {
    operationId: 'getMe',
    summary: "The caller's own record",
    tag: 'Identity',
    responses: { 200: { description: 'The caller', schema: MeSchema } },
  },
  [`PATCH ${V4_BASE}/identity/me/profile`]: {
    operationId: 'updateProfile',
    summary: "Update the caller's name or preferences",
    tag: 'Identity',
    body: { schema: UpdateProfileInputSchema },
    responses: { 200: { description: 'The caller', schema: MeSchema } },
  },
  [`GET ${V4_BASE}/identity/tenants`]: {
    operationId: 'listMyTenants',
    summary: "The caller's tenants",
    tag: 'Identity',
    responses: { 200: { description: 'Memberships', schema: listOf(TenantMembershipSchema) } },
  },
  [`POST ${V4_BASE}/identity/me/provision`]: {
    operationId: 'provisionMe',
    summary: 'Join a tenant whose domain matches the verified e-mail address',
    tag: 'Identity',
    query: { tenant_id: param(ProvisionSelfInputSchema.shape.tenant_id, { description: 'May be given in the body instead' }) },
    body: { schema: ProvisionSelfInputSchema.partial(), required: false },
    responses: membership,
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants`]: {
    operationId: 'createRootTenant',
    summary: 'Create a root tenant',
    tag: 'Platform',
    body: { schema: CreateRootTenantInputSchema },
    responses: { 201: { description: 'The tenant, provisioning', schema: TenantSchema } },
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants/:tenantId/children`]: {
    operationId: 'createChildTenant',
    summary: 'Create a child tenant',
    tag: 'Platform',
    path: tenantPath,
    body: { schema: CreateChildTenantInputSchema },
    responses: { 201: { description: 'The tenant, provisioning', schema: TenantSchema } },
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants/:tenantId/children/:childId/bootstrap-admin`]: {
    operationId: 'bootstrapChildAdmin',
    summary: 'Make the caller an administrator of a child tenant',
    tag: 'Platform',
    path: { ...tenantPath, childId: TenantRefSchema },
    responses: membership,
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants/:tenantId/apps`]: {
    operationId: 'createApp',
    summary: 'Enroll an app',
    tag: 'Platform',
    path: tenantPath,
    body: { schema: CreateAppInputSchema },
    responses: { 201: { description: 'The app', schema: AppSchema } },
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants/:tenantId/delete`]: {
    operationId: 'deleteTenant',
    summary: 'Delete a tenant (soft)',
    tag: 'Platform',
    path: tenantPath,
    responses: { 204: { description: 'Deleted' } },
    errors: [409],
  },
  [`POST ${V4_BASE}/platform/tenants/:tenantId/users/:oid/provision`]: {
    operationId: 'provisionTenantUser',
    summary: 'Grant a user membership of a tenant',
    tag: 'Platform',
    path: { ...tenantPath, oid: UserRefSchema },
    responses: membership,
    errors: [409],
  },
  [`GET ${V4_BASE}/platform/users/by-email`]: {
    operationId: 'findUserByEmail',
    summary: 'Find a user by e-mail address',
    tag: 'Platform',
    query: { email: param(FindUserByEmailInputSchema.shape.email, { required: true }) },
    responses: { 200: { description: 'The user', schema: PlatformUserSchema } },
  },
  [`GET ${V4_BASE}/platform/users/:oid/memberships`]: {
    operationId: 'listUserMemberships',
    summary: "A user's memberships",
    tag: 'Platform',
    path: { oid: UserRefSchema },
    responses: { 200: { description: 'Memberships', schema: listOf(TenantMembershipSchema) } },
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/storage`]: {
    operationId: 'getStorageStatus',
    summary: "The tenant's storage backends",
    tag: 'Storage',
    path: tenantPath,
    responses: { 200: { description: 'Storage status', schema: StorageStatusSchema } },
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/storage/doctor`]: {
    operationId: 'checkStorage',
    summary: "Check the tenant's storage",
    tag: 'Storage',
    path: tenantPath,
    responses: { 200: { description: 'The checks', schema: DoctorReportSchema } },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/storage/provision`]: {
    operationId: 'provisionStorage',
    summary: "Provision the tenant's storage",
    tag: 'Storage',
    path: tenantPath,
    query: { backend: param(ProvisionInputSchema.shape.backend, { description: 'May be given in the body instead' }), ...dryRunFlags, rebuildSearch: ProvisionInputSchema.shape.rebuildSearch },
    body: { schema: ProvisionInputSchema, required: false },
    responses: {
      200: { description: 'Provisioning ended (or a dry run)', schema: ProvisionOutcomeSchema },
      202: { description: 'Provisioning is still running', schema: ProvisionOutcomeSchema },
    },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/storage/sync-schema`]: {
    operationId: 'syncStorageSchema',
    summary: "Bring the tenant's storage in line with its object types",
    tag: 'Storage',
    path: tenantPath,
    query: { backend: param(SyncSchemaInputSchema.shape.backend, { description: 'May be given in the body instead' }), ...dryRunFlags },
    body: { schema: SyncSchemaInputSchema, required: false },
    responses: { 200: { description: 'The changes', schema: SyncSchemaOutcomeSchema } },
  },
  [`GET ${V4_BASE}/data/resources/object-types`]: {
    operationId: 'listObjectTypes',
    summary: "The tenant's object types",
    tag: 'Object types',
    query: tenantQuery,
    responses: { 200: { description: 'Object types', schema: listOf(ObjectTypeSchema) } },
  },
  [`POST ${V4_BASE}/data/resources/object-types`]: {
    operationId: 'createObjectType',
    summary: 'Create an object type',
    tag: 'Object types',
    query: tenantQuery,
    body: { schema: CreateObjectTypeInputSchema.extend({ tenant_id: TenantRefSchema.optional() }) },
    responses: { 201: { description: 'The object type', schema: ObjectTypeSchema } },
    errors: [409],
  },
  [`PATCH ${V4_BASE}/data/resources/object-types/:objectTypeId`]: {
    operationId: 'updateObjectType',
    summary: 'Change an object type',
    tag: 'Object types',
    path: { objectTypeId: UpdateObjectTypeInputSchema.shape.objectTypeId },
    query: tenantQuery,
    body: { schema: UpdateObjectTypeInputSchema.shape.changes.extend({ tenant_id: TenantRefSchema.optional() }) },
    responses: { 200: { description: 'The object type', schema: ObjectTypeSchema } },
    errors: [409],
  },
  [`GET ${V4_BASE}/data/resources/schema/:tenantId`]: {
    operationId: 'listPublishedObjectTypes',
    summary: "A tenant's published object types",
    tag: 'Object types',
    path: tenantPath,
    responses: { 200: { description: 'Published object types', schema: listOf(ObjectTypeSchema) } },
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/:objectType`]: {
    operationId: 'listTenantResources',
    summary: 'List resources of a type',
    tag: 'Resources',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    query: {
      page: param(ListResourcePageInputSchema.shape.page, { description: '1-based; not with `cursor`' }),
      limit: ListResourcePageInputSchema.shape.limit,
      sort: param(ListResourcePageInputSchema.shape.sort, { description: 'Fields, `-` for descending; default `-created_at`' }),
      where: param(ListResourcePageInputSchema.shape.where, { json: true, description: 'A structured filter, as JSON' }),
      cursor: param(ListResourcePageInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
    },
    responses: { 200: { description: 'A page of resources', schema: ResourceListPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }) } },
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/:objectType/:id`]: {
    operationId: 'getTenantResource',
    summary: 'Get a resource',
    tag: 'Resources',
    path: resourcePath,
    headers: { 'If-None-Match': param(EntityTag, { description: 'A version the client holds: 304 when it is current' }) },
    responses: {
      200: { description: 'The resource', schema: ResourceSchema, etag: true },
      304: { description: 'The version named by If-None-Match is current', etag: true },
    },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType`]: {
    operationId: 'createTenantResource',
    summary: 'Create a resource',
    tag: 'Resources',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    body: { schema: CreateResourceInputSchema.omit({ type: true }) },
    responses: { 201: { description: 'The created resource', schema: ResourceSchema, etag: true } },
    errors: [409],
  },
  [`PUT ${V4_BASE}/data/resources/:tenantId/:objectType/:id`]: {
    operationId: 'replaceTenantResource',
    summary: 'Replace a resource at a version',
    tag: 'Resources',
    description: 'The version replaced is named by `version` in the body or by `If-Match`; one is required.',
    path: resourcePath,
    headers: { 'If-Match': param(EntityTag, { description: 'The version replaced (`"3"`), or `*`' }) },
    body: { schema: ReplaceAtVersionInputSchema.omit({ type: true, id: true, ifMatch: true }) },
    responses: { 200: { description: 'The replaced resource', schema: ResourceSchema, etag: true } },
    errors: [409, 428],
  },
  [`DELETE ${V4_BASE}/data/resources/:tenantId/:objectType/:id`]: {
    operationId: 'deleteTenantResource',
    summary: 'Delete a resource',
    tag: 'Resources',
    path: resourcePath,
    headers: { 'If-Match': param(EntityTag, { description: 'Delete only at this version (`"3"`)' }) },
    responses: { 204: { description: 'Deleted' } },
    errors: [409],
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/query`]: {
    operationId: 'queryTenantResources',
    summary: 'Query resources across types',
    tag: 'Resources',
    description: 'Newest first; each item carries its type.',
    path: tenantPath,
    body: { schema: QueryResourcesInputSchema },
    responses: { 200: { description: 'A page of resources', schema: ResourceQueryPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }) } },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/aggregate`]: {
    operationId: 'aggregateTenantResources',
    summary: "Aggregate a type's resources",
    tag: 'Resources',
    description: 'One row per group: the group keys as named, and each metric by its alias (`{"n": {"count": "*"}}`).',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    body: { schema: AggregateResourcesInputSchema.omit({ type: true }) },
    responses: { 200: { description: 'The groups', schema: AggregateResultSchema.omit({ items: true }).extend({ data: AggregateResultSchema.shape.items }) } },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/:id/actions/:action`]: {
    operationId: 'applyResourceAction',
    summary: 'Apply an action the object type declares',
    tag: 'Resources',
    description: "A guarded transition and/or a workflow started with the resource as input, at the version in the body or `If-Match` when given.",
    path: { ...resourcePath, action: param(ApplyActionInputSchema.shape.action, { description: 'An action the object type declares' }) },
    headers: { 'If-Match': param(EntityTag, { description: 'Apply only at this version (`"3"`)' }) },
    body: { schema: ApplyActionInputSchema.omit({ type: true, id: true, action: true, ifMatch: true }), required: false },
    responses: { 200: { description: 'The resource after the action, and the execution it started', schema: ActionResultSchema, etag: true } },
    errors: [409],
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/:objectType/:id/history`]: {
    operationId: 'getResourceHistory',
    summary: "A resource's history, newest first",
    tag: 'Resources',
    description: 'Every create, update, action and delete as a version entry; it outlives the delete.',
    path: resourcePath,
    query: { page: ResourceHistoryInputSchema.shape.page, limit: ResourceHistoryInputSchema.shape.limit },
    responses: { 200: { description: 'A page of version entries', schema: ResourceHistoryPageSchema.omit({ items: true }).extend({ data: ResourceHistoryPageSchema.shape.items }) } },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/batch/create`]: {
    operationId: 'batchCreateResources',
    summary: 'Create up to 1000 resources, all or none',
    tag: 'Batches',
    description: 'The body is an array of data objects, `{items: [...]}`, or one object. A failure names the item (`details.index`).',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    headers: { 'Idempotency-Key': param(IdempotencyKeySchema, { description: 'A retry with the same key and body answers the first answer' }) },
    body: { schema: z.union([BatchCreateInputSchema.shape.items, BatchCreateInputSchema.pick({ items: true })]) },
    responses: { 201: { description: 'The created resources', schema: listOf(ResourceSchema) } },
    errors: [409],
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/batch/update`]: {
    operationId: 'batchUpdateResources',
    summary: 'Replace up to 1000 resources at their versions, all or none',
    tag: 'Batches',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    headers: { 'Idempotency-Key': param(IdempotencyKeySchema, { description: 'A retry with the same key and body answers the first answer' }) },
    body: { schema: z.union([BatchUpdateInputSchema.shape.items, BatchUpdateInputSchema.pick({ items: true })]) },
    responses: { 200: { description: 'The replaced resources', schema: listOf(ResourceSchema) } },
    errors: [409],
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/batch/delete`]: {
    operationId: 'batchDeleteResources',
    summary: 'Delete up to 1000 resources, all or none',
    tag: 'Batches',
    path: { tenantId: tenantPath.tenantId, objectType: resourcePath.objectType },
    headers: { 'Idempotency-Key': param(IdempotencyKeySchema, { description: 'A retry with the same key and body answers the first answer' }) },
    body: { schema: z.union([BatchDeleteInputSchema.shape.ids, BatchDeleteInputSchema.pick({ ids: true })]) },
    responses: { 200: { description: 'How many were deleted', schema: BatchDeletedSchema } },
    errors: [409],
  },
  [`GET ${V4_BASE}/platform/capabilities/catalog`]: {
    operationId: 'capabilityCatalog',
    summary: 'Capabilities and what each plan includes',
    tag: 'Capabilities',
    responses: { 200: { description: 'The catalog', schema: CatalogSchema.omit({ items: true }).extend({ data: z.array(CapabilitySchema) }) } },
  },
  [`POST ${V4_BASE}/platform/capabilities/evaluate`]: {
    operationId: 'evaluateCapabilities',
    summary: "Decide a tenant's capabilities",
    tag: 'Capabilities',
    description: "From the tenant's plan, home region and overrides; the tenant is `tenant_id` in the body or query string, else the caller's.",
    query: tenantQuery,
    body: { schema: EvaluateInputSchema.extend({ tenant_id: tenantQuery.tenant_id.schema.optional() }), required: false },
    responses: { 200: { description: 'A decision per capability', schema: EvaluationSchema } },
  },
  [`PUT ${V4_BASE}/platform/capabilities/overrides/:tenantId/:capability`]: {
    operationId: 'setCapabilityOverride',
    summary: 'Allow or refuse a capability for one tenant (platform administrators)',
    tag: 'Capabilities',
    path: { ...tenantPath, capability: OverrideInputSchema.shape.capability },
    body: { schema: OverrideInputSchema.omit({ tenantId: true, capability: true }) },
    responses: { 200: { description: 'The override', schema: OverrideSchema } },
  },
  [`DELETE ${V4_BASE}/platform/capabilities/overrides/:tenantId/:capability`]: {
    operationId: 'removeCapabilityOverride',
    summary: "Remove a tenant's override (platform administrators)",
    tag: 'Capabilities',
    path: { ...tenantPath, capability: OverrideInputSchema.shape.capability },
    responses: { 204: { description: 'Removed' } },
  },
  [`PUT ${V4_BASE}/platform/tenants/:tenantId/plan`]: {
    operationId: 'setTenantPlan',
    summary: "Set a tenant's plan (platform administrators)",
    tag: 'Capabilities',
    path: tenantPath,
    body: { schema: SetPlanInputSchema.omit({ tenantId: true }) },
    responses: { 200: { description: "The tenant's plan", schema: TenantPlanSchema } },
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/:objectType/:id/files/:propertyName`]: {
    operationId: 'uploadResourceFile',
    summary: "Upload a resource's file",
    tag: 'Files',
    description: "The body is the file. Its type is judged by its content against the property's declared types; the resource gets a new version.",
    path: filePath,
    query: { filename: param(UploadMetaSchema.shape.filename, { required: true }) },
    body: { binary: true, description: "The file's bytes" },
    responses: { 200: { description: 'The resource, describing the file in its data', schema: ResourceSchema } },
    errors: [409, 415],
  },
  [`GET ${V4_BASE}/data/resources/:tenantId/:objectType/:id/files/:propertyName`]: {
    operationId: 'downloadResourceFile',
    summary: "Download a resource's file",
    tag: 'Files',
    path: filePath,
    responses: { 200: { description: "The file, with its media type, size and name (Content-Disposition)", binary: true } },
  },
  [`DELETE ${V4_BASE}/data/resources/:tenantId/:objectType/:id/files/:propertyName`]: {
    operationId: 'deleteResourceFile',
    summary: "Remove a resource's file",
    tag: 'Files',
    path: filePath,
    responses: { 204: { description: 'Removed' } },
    errors: [409],
  },
  [`POST ${V4_BASE}/ai/chat/:tenantId/:workflowId/:stage`]: {
    operationId: 'chatWithWorkflow',
    summary: 'Ask a workflow stage a question',
    tag: 'AI',
    description:
      "The workflow (its `shared-workflow-config` key) and stage set the prompts; its `shared-chatbot-config` and `shared-ai-profile` the model and retrieval. `conversation_id` continues a conversation, or starts one under that id. An unknown workflow or stage is 404; a workflow without an AI runtime binding is 409.",
    path: { ...tenantPath, workflowId: WorkflowChatInputSchema.shape.workflowId, stage: WorkflowChatInputSchema.shape.stage },
    body: { schema: WorkflowChatBodySchema },
    responses: { 200: { description: 'The answer with its citations, ids and token usage', schema: WorkflowChatAnswerSchema } },
    errors: [409, 502],
  },
  [`POST ${V4_BASE}/ai/chat/stream/:tenantId/:workflowId/:stage`]: {
    operationId: 'streamChatWithWorkflow',
    summary: 'Ask a workflow stage a question and stream the answer (server-sent events)',
    tag: 'AI',
    description: 'The events of v3 chat, then the literal line `data: [DONE]`. Refusals are JSON answers before any stream starts.',
    path: { ...tenantPath, workflowId: WorkflowChatInputSchema.shape.workflowId, stage: WorkflowChatInputSchema.shape.stage },
    body: { schema: WorkflowChatBodySchema },
    responses: { 200: { description: 'The answer as it is produced, then `data: [DONE]`', events: ChatEventSchema, done: true, streamIds: true } },
    errors: [409],
  },
  [`GET ${V4_BASE}/workflows/runtime/:workflowKey/status`]: {
    operationId: 'workflowRuntimeStatus',
    summary: 'Whether a workflow has an executable runtime binding now',
    tag: 'Workflows',
    description: 'One of `available`, `operator_required`, `paid_upgrade_required`, `rate_limited`, `blocked`, `unsupported`, with the reason.',
    path: { workflowKey: WorkflowStatusInputSchema.shape.workflowKey },
    query: tenantQuery,
    responses: { 200: { description: "The workflow's runtime status", schema: WorkflowStatusSchema } },
  },
  [`POST ${V4_BASE}/workflows/runtime-requests`]: {
    operationId: 'requestWorkflowRuntime',
    summary: 'Ask an operator to bind a workflow to an AI runtime',
    tag: 'Workflows',
    description: 'A workflow has one open request: asking again answers it (200) rather than recording another (201).',
    query: tenantQuery,
    body: { schema: RuntimeRequestInputSchema.extend({ tenant_id: tenantQuery.tenant_id.schema.optional() }) },
    responses: {
      201: { description: 'The request, recorded', schema: RuntimeRequestSchema },
      200: { description: "The workflow's open request", schema: RuntimeRequestSchema },
    },
  },
  [`GET ${V4_BASE}/integrations/builder/readiness`]: {
    operationId: 'builderReadiness',
    summary: 'Tenant, plan and workflow readiness for a builder',
    tag: 'Integrations',
    query: { ...tenantQuery, workflow_keys: param(ReadinessInputSchema.shape.workflow_keys, { description: 'Comma-separated workflow keys; default: every configured workflow' }) },
    responses: { 200: { description: 'The readiness report', schema: ReadinessSchema } },
  },
  [`POST ${V4_BASE}/geo/resolve-location`]: {
    operationId: 'resolveLocation',
    summary: 'Find places by name',
    tag: 'Geo',
    description:
      'Places of the GeoNames gazetteer (places of at least 1000 inhabitants; GeoNames, CC BY 4.0) whose name matches `query`, best first: exact, then prefix, word and misspelt matches, each by population. A country or first-level division after a comma narrows it (`Springfield, IL`, `London, Canada`). Needs the `geo` capability; the tenant is `tenant_id` in the body or query string, else the caller\'s.',
    query: tenantQuery,
    body: { schema: ResolveLocationInputSchema.extend({ tenant_id: tenantQuery.tenant_id.schema.optional() }) },
    responses: { 200: { description: 'How the query was read, and the places found', schema: ResolvedLocationsSchema } },
  },
  [`POST ${V4_BASE}/geo/reverse`]: {
    operationId: 'reverseGeocode',
    summary: 'Find the places nearest to coordinates',
    tag: 'Geo',
    description: "The gazetteer's places nearest to `lat`,`lon`, nearest first, within `radius` meters when given. Needs the `geo` capability.",
    query: tenantQuery,
    body: { schema: ReverseInputSchema.extend({ tenant_id: tenantQuery.tenant_id.schema.optional() }) },
    responses: { 200: { description: 'The nearest places with their distance in meters', schema: NearbyPlacesSchema } },
  },
  [`GET ${V4_BASE}/geo/datasets/:tenantId`]: {
    operationId: 'listGeoDatasets',
    summary: "A tenant's geo datasets",
    tag: 'Geo',
    path: tenantPath,
    responses: { 200: { description: 'Every dataset of the tenant, by key', schema: listOf(DatasetSchema) } },
  },
  [`POST ${V4_BASE}/geo/datasets/:tenantId`]: {
    operationId: 'createGeoDataset',
    summary: 'Create an empty geo dataset',
    tag: 'Geo',
    description: 'A tenant holds up to 100 datasets unless its `geo` capability sets `maxDatasets`.',
    path: tenantPath,
    body: { schema: CreateDatasetInputSchema },
    responses: { 201: { description: 'The dataset', schema: DatasetSchema } },
    errors: [409],
  },
  [`GET ${V4_BASE}/geo/datasets/:tenantId/:dataset`]: {
    operationId: 'getGeoDataset',
    summary: 'A geo dataset, with its feature count and extent',
    tag: 'Geo',
    path: { ...tenantPath, dataset: DatasetRefSchema.shape.dataset },
    responses: { 200: { description: 'The dataset', schema: DatasetSchema } },
  },
  [`DELETE ${V4_BASE}/geo/datasets/:tenantId/:dataset`]: {
    operationId: 'deleteGeoDataset',
    summary: 'Delete a geo dataset and its features',
    tag: 'Geo',
    path: { ...tenantPath, dataset: DatasetRefSchema.shape.dataset },
    responses: { 204: { description: 'Deleted' } },
  },
  [`POST ${V4_BASE}/geo/datasets/:tenantId/:dataset/features`]: {
    operationId: 'addGeoFeatures',
    summary: 'Add a GeoJSON FeatureCollection to a dataset',
    tag: 'Geo',
    description:
      'RFC 7946 GeoJSON: WGS 84 longitude and latitude. Each feature replaces the feature of its `id`; one without an `id` gets a new one. All or nothing; up to 10000 features and 1 MiB per request, 100000 features per dataset unless the `geo` capability sets `maxFeaturesPerDataset`.',
    path: { ...tenantPath, dataset: DatasetRefSchema.shape.dataset },
    body: { schema: FeatureCollectionInputSchema },
    responses: { 200: { description: 'The dataset, and how many features were created and updated', schema: IngestOutcomeSchema } },
  },
  [`PUT ${V4_BASE}/geo/datasets/:tenantId/:dataset/features`]: {
    operationId: 'replaceGeoFeatures',
    summary: "Replace a dataset's features with a GeoJSON FeatureCollection",
    tag: 'Geo',
    description: 'As POST, and the features the collection does not name (by `id`) are removed.',
    path: { ...tenantPath, dataset: DatasetRefSchema.shape.dataset },
    body: { schema: FeatureCollectionInputSchema },
    responses: { 200: { description: 'The dataset, and how many features were created, updated and removed', schema: IngestOutcomeSchema } },
  },
  [`GET ${V4_BASE}/geo/datasets/:tenantId/:dataset/features`]: {
    operationId: 'queryGeoFeatures',
    summary: "Page through a dataset's features: all, in a box, or within a radius",
    tag: 'Geo',
    description:
      'A GeoJSON FeatureCollection. `bbox` gives the features whose geometry meets the box, by southern edge; `lat`, `lon` and `radius` those within the radius (nearest first, with `distanceMeters`); neither, every feature. `nextCursor` fetches the next page.',
    path: { ...tenantPath, dataset: DatasetRefSchema.shape.dataset },
    query: {
      bbox: param(z.string(), { description: '`west,south,east,north` in degrees; west may exceed east for a box across the antimeridian' }),
      lat: param(z.number().min(-90).max(90), { description: "The radius query's center latitude" }),
      lon: param(z.number().min(-180).max(180), { description: "The radius query's center longitude" }),
      radius: param(z.number().positive().max(1_000_000), { description: 'Meters, at most 1000000' }),
      limit: QueryFeaturesInputSchema.shape.limit,
      cursor: param(QueryFeaturesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
    },
    responses: { 200: { description: 'A page of features', schema: FeaturePageSchema } },
  },
};

/** Names of the response schemas several routes share, as the documents' components call them. */
export const V3_SCHEMA_NAMES: Array<[z.ZodType, string]> = [
  [V3ResourceSchema, 'Resource'],
  [UserSchema, 'User'],
  [V3ExecutionSchema, 'Execution'],
];
export const V4_SCHEMA_NAMES: Array<[z.ZodType, string]> = [
  [ResourceSchema, 'Resource'],
  [MembershipSchema, 'Membership'],
  [TenantMembershipSchema, 'TenantMembership'],
  [TenantSchema, 'Tenant'],
  [ObjectTypeSchema, 'ObjectType'],
  [MeSchema, 'Me'],
  [StorageStatusSchema, 'StorageStatus'],
];
