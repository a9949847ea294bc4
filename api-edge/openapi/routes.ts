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
  ClientIdSchema,
  CreateVerticalResourceInputSchema,
  EnsureIdpAppInputSchema,
  IdpAppWithSecretSchema,
  ListVerticalResourcesInputSchema,
  ReplaceVerticalResourceInputSchema,
  RotatedSecretSchema,
  RotateClientSecretInputSchema,
  VerticalKeySchema,
  VerticalSchema,
} from '../../control-plane/contracts.ts';
import { ResourceSearchInputSchema, ResourceSearchResultSchema } from '../../control-plane/contracts.ts';
import {
  AlertsSchema,
  CreateEndpointInputSchema,
  DeliveryDetailSchema,
  DeliveryPageSchema,
  DeliveryRefSchema,
  DeliverySchema,
  EndpointChangesSchema,
  EndpointSchema,
  EndpointWithSecretSchema,
  EventIdSchema,
  ListDeliveriesInputSchema,
  ListRefusalsInputSchema,
  NegotiateInputSchema,
  NegotiationSchema,
  ReceivedSchema,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  ReceiveMetaSchema,
  RefusalPageSchema,
  REFUSED_SAMPLE_SIZE,
  RotatedEndpointSchema,
  RotateWebhookSecretInputSchema,
  RotatedSigningKeysSchema,
  RotateSigningKeysInputSchema,
  SourceSchema,
  StreamInputSchema,
  WEBHOOK_HEADERS,
  ChunkingOptionsSchema,
  ClassificationSchema,
  DocumentJobSchema,
  DocumentRefSchema,
  DocumentSchema,
  DocumentSearchResultsSchema,
  DocumentTypeSchema,
  IndexOutcomeSchema,
  JobRefSchema,
  ListDocumentsInputSchema,
  SearchDocumentsInputSchema,
  SubmitIndexJobFieldsSchema,
} from '../../control-plane/contracts.ts';
import { MAX_FIELD_BYTES } from '../plugins/multipart.ts';
import { V3_BASE, V4_BASE } from '../routes/bases.ts';
import type { HttpMethod, Route } from '../routes/route.ts';
import { VERSION_TAG } from '../routes/request-input.ts';
import { V3DocumentPageSchema, V3DocumentSchema } from '../routes/v3/documents.ts';
import { MAX_V4_UPLOAD_FILES } from '../routes/v4/data-documents.ts';
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
  /** The body is a stream of server-sent events (`text/event-stream`). */
  eventStream?: boolean;
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
  /**
   * A JSON body (`required` unless said otherwise), the bytes of a file, or a `multipart/form-data`
   * form: its text fields (as text) and its file parts (`multiple`: the part may repeat, up to that many times).
   */
  body?:
    | { schema: z.ZodType; required?: boolean; description?: string }
    | { binary: true; description: string }
    | { multipart: z.ZodObject; files: Record<string, { description: string; multiple?: number; required: boolean }>; description: string };
  responses: Record<number, ResponseDoc>;
  /** Error statuses beyond those every route may answer (400, 401, 403, 404, 429, 500; 413 with a body method). */
  errors?: number[];
  /** Authenticated by something other than a user's token: a negotiated realtime token, or a webhook's signature (the description says how). */
  security?: 'realtimeToken' | 'webhookSignature';
}

const param = (schema: z.ZodType, extra: Omit<ParamDoc, 'schema'> = {}): ParamDoc => ({ schema, ...extra });
const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

/** A resource's version, as `ETag` sends it and the conditional headers name it (`"3"`, or `*`). */
const EntityTag = z.string().max(16).regex(VERSION_TAG);
const tenantPath = { tenantId: param(TenantRefSchema, { description: 'Tenant id or slug' }) };
const tenantQuery = { tenant_id: param(TenantRefSchema, { description: "Tenant id or slug; default: the caller's active tenant" }) };
const dryRunFlags = {
  dryRun: param(ProvisionInputSchema.shape.dryRun, { description: 'May be given in the body instead' }),
};
const resourcePath = { ...tenantPath, objectType: param(ResourceRefSchema.shape.type, { description: 'The object type, by key or PascalCase name' }), id: ResourceRefSchema.shape.id };
const filePath = { ...resourcePath, propertyName: param(FileRefSchema.shape.property, { description: 'A file property the object type declares' }) };
const verticalTenantQuery = { tenant_id: param(TenantRefSchema, { description: "The app's company tenant or its child tenant, by id or slug; default: the caller's tenant" }) };
const verticalTypePath = { key: param(VerticalKeySchema, { description: 'The key of an enrolled app' }), objectType: resourcePath.objectType };
const verticalResourcePath = { ...verticalTypePath, id: ResourceRefSchema.shape.id };
/** The text fields of a document upload form, as text. */
const flag = z.enum(['true', 'false']).optional();
const V3UploadFormSchema = z.object({
  type: DocumentTypeSchema.optional().describe('The document type; default `general`'),
  tags: z.string().max(MAX_TAGS * (MAX_TAG_LENGTH + 1)).optional().describe(`Comma-separated tags (at most ${MAX_TAGS})`),
  autoClassify: flag.describe('Classify it (a processing job)'),
  autoIndex: flag.describe('Index it for search (a processing job)'),
  metadata: z.string().max(MAX_FIELD_BYTES).optional().describe('A JSON object, as text'),
});
const V4UploadFormSchema = z.object({
  tenant_id: TenantRefSchema.optional().describe('The tenant (id or slug), before the files; or in the query string'),
  type: V3UploadFormSchema.shape.type,
  tags: V3UploadFormSchema.shape.tags,
  metadata: V3UploadFormSchema.shape.metadata,
});
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
    body: { schema: ResourceDataSchema, description: "The resource's fields; `id`, `type`, `createdAt`, `updatedAt`, `version`, `tenantId`, `createdBy` and `updatedBy` are the server's, and ignored" },
    responses: { 201: { description: 'The created resource', schema: V3ResourceSchema } },
    errors: [409],
  },
  [`PUT ${V3_BASE}/resources/:type/:id`]: {
    operationId: 'replaceResource',
    summary: 'Replace a resource',
    tag: 'Resources',
    path: ResourceRefSchema.shape,
    body: { schema: ResourceDataSchema, description: "The resource's new fields (the server's own, as on create, are ignored)" },
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
    description:
      "With `async` false (the default) the answer waits a bounded time for the execution to end. A start beyond the plan's concurrent executions (workflows.runtime `maxConcurrentExecutions`) is 429; a workflow with an `ai_chat` step is refused as chat is (403 without the `ai.chat` capability, 429 once the day's chat messages are spent), and each `ai_chat` step counts one message.",
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
  [`POST ${V3_BASE}/documents`]: {
    operationId: 'uploadDocument',
    summary: 'Upload a document',
    tag: 'Documents',
    description:
      'A form with the file, streamed to the blob store. Its type is judged by its content (PDF, DOC, DOCX, TXT, RTF, XLS, XLSX, CSV, JPG, PNG, GIF, WEBP); at most 100 MB (less on some plans). A file that would pass the tenant\'s storage quota (storage.blob `maxStoredBytes`) is 413, by its declared length before it is read. `autoClassify` and `autoIndex` start a processing job. 50 uploads per minute per tenant.',
    body: { multipart: V3UploadFormSchema, files: { file: { description: 'The document', required: true } }, description: 'The file and its description' },
    responses: { 201: { description: 'The document, `uploaded`', schema: V3DocumentSchema } },
    errors: [409, 415],
  },
  [`GET ${V3_BASE}/documents`]: {
    operationId: 'listDocuments',
    summary: 'List documents',
    tag: 'Documents',
    query: {
      type: ListDocumentsInputSchema.shape.type,
      tags: param(V3UploadFormSchema.shape.tags, { description: 'Comma-separated: documents holding every one of them' }),
      status: ListDocumentsInputSchema.shape.status,
      indexed: ListDocumentsInputSchema.shape.indexed,
      limit: ListDocumentsInputSchema.shape.limit,
      offset: ListDocumentsInputSchema.shape.offset,
    },
    responses: { 200: { description: 'A page of documents, newest first', schema: V3DocumentPageSchema } },
  },
  [`POST ${V3_BASE}/documents/search`]: {
    operationId: 'searchDocuments',
    summary: 'Search indexed documents',
    tag: 'Documents',
    body: { schema: SearchDocumentsInputSchema, description: '`minScore` is on the 0..1 scale of `score`' },
    responses: { 200: { description: 'Matching chunks, best first', schema: DocumentSearchResultsSchema } },
    errors: [502],
  },
  [`GET ${V3_BASE}/documents/search`]: {
    operationId: 'searchDocumentsByQuery',
    summary: 'Search indexed documents (query string)',
    tag: 'Documents',
    query: SearchDocumentsInputSchema.shape,
    responses: { 200: { description: 'Matching chunks, best first', schema: DocumentSearchResultsSchema } },
    errors: [502],
  },
  [`GET ${V3_BASE}/documents/:id`]: {
    operationId: 'getDocument',
    summary: 'Get a document, with its classification',
    tag: 'Documents',
    path: DocumentRefSchema.shape,
    responses: { 200: { description: 'The document', schema: V3DocumentSchema } },
  },
  [`GET ${V3_BASE}/documents/:id/file`]: {
    operationId: 'downloadDocument',
    summary: "Download a document's file (its `url`)",
    tag: 'Documents',
    path: DocumentRefSchema.shape,
    responses: { 200: { description: 'The file, with its media type, size and name (Content-Disposition)', binary: true } },
  },
  [`POST ${V3_BASE}/documents/:id/classify`]: {
    operationId: 'classifyDocument',
    summary: 'Classify a document',
    tag: 'Documents',
    path: DocumentRefSchema.shape,
    responses: { 200: { description: 'Its category, subcategory, confidence and the fields read from it', schema: ClassificationSchema } },
  },
  [`POST ${V3_BASE}/documents/:id/index`]: {
    operationId: 'indexDocument',
    summary: 'Index a document for search',
    tag: 'Documents',
    description: 'Runs an indexing job (chunks in tokens: `chunkSize` 100-4000, default 800; `chunkOverlap` at most half of it, default 400) and waits up to 25 s for it. Re-indexing replaces the chunks.',
    path: DocumentRefSchema.shape,
    body: { schema: ChunkingOptionsSchema, required: false },
    responses: {
      200: { description: 'The job finished: `indexed` with the chunk count, or `failed` with the reason', schema: IndexOutcomeSchema },
      202: { description: 'The job still runs (`processing`)', schema: IndexOutcomeSchema },
    },
    errors: [409],
  },
  [`DELETE ${V3_BASE}/documents/:id`]: {
    operationId: 'deleteDocument',
    summary: 'Delete a document, its file, chunks and vectors',
    tag: 'Documents',
    path: DocumentRefSchema.shape,
    responses: { 204: { description: 'Deleted' } },
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
    description: 'A user may follow at most 5 resumed answers at a time, and an answer may be resumed by at most 3 clients at a time: beyond, 429 before any stream starts.',
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
    summary: 'Join a tenant: accept its invitation, or join one whose domain matches the verified e-mail address',
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
    summary: 'Invite a user to a tenant (a membership with status "invited" until the user accepts it)',
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
    description: 'A type may ask for at most 20 indexed fields (`indexes` and fields its schema marks `x-indexed`), and all of a tenant\'s types together for at most 50: beyond, 403 naming the limit.',
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
    description: 'Indexed fields are bounded as on create (20 per type, 50 per tenant): beyond, 403 naming the limit.',
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
    description:
      "The body is the file. Its type is judged by its content against the property's declared types; the resource gets a new version. A file that would pass the tenant's storage quota (storage.blob `maxStoredBytes`) is 413, by its Content-Length before it is read.",
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
  // Realtime and webhooks (api-edge/routes/v4/realtime.ts, webhooks.ts).
  [`POST ${V4_BASE}/realtime/negotiate`]: {
    operationId: 'negotiateRealtime',
    summary: 'Negotiate a realtime connection',
    tag: 'Realtime',
    description:
      "A signed token for the tenant's resource changes on the channels named (`resources`, `resources:<type>`, `resources:<type>:<id>`), which opens one connection within a minute (a second connection with it is refused: negotiate again to reconnect), and the URL to connect with it. The tenant is `tenant_id` in the body or query string, else the caller's. Needs `resources.read` and the `realtime` capability; the tenant's changes are recorded from its first negotiation on.",
    query: tenantQuery,
    body: { schema: NegotiateInputSchema.extend({ tenant_id: tenantQuery.tenant_id.schema.optional() }) },
    responses: { 200: { description: 'The token and the URL to connect to', schema: NegotiationSchema.extend({ url: z.string() }) } },
  },
  [`GET ${V4_BASE}/realtime/connect`]: {
    operationId: 'connectRealtime',
    summary: "The tenant's resource changes as server-sent events",
    tag: 'Realtime',
    description:
      'Authenticated by the negotiated token (`?token=`, or `Authorization: Bearer <token>`), not by a user token. Events: `ready` at once (its `id` is the newest event before the first one sent), then `resource.created`, `resource.updated`, `resource.deleted` and `resource.action`, each with `id` (the event id) and data `{eventId, event, type, id, version, action?, at}`; `reset` when events to resume after are no longer in the log (the client should reload what it shows); a `: heartbeat` comment every 15 s; `revoked` (data `{reason}`) when the user of the token loses the tenant membership or `resources.read`, checked every few seconds; `expired` after an hour. Both end the stream. A token opens one connection: a second one with it is 401; to reconnect, negotiate again and resume. `Last-Event-ID` (or `?lastEventId=`) resumes after that event.',
    security: 'realtimeToken',
    query: {
      token: param(StreamInputSchema.shape.token, { required: false, description: 'The negotiated token (or send it as a bearer token)' }),
      lastEventId: param(EventIdSchema, { required: false, description: 'Resume after this event (browsers send Last-Event-ID themselves when they reconnect)' }),
    },
    headers: { 'Last-Event-ID': param(EventIdSchema, { required: false, description: 'Resume after this event' }) },
    responses: { 200: { description: 'The event stream', eventStream: true } },
  },
  [`POST ${V4_BASE}/platform/realtime/signing-keys/rotate`]: {
    operationId: 'rotateRealtimeSigningKeys',
    summary: 'Rotate the key that signs realtime connection tokens',
    tag: 'Realtime',
    description:
      'For platform administrators (`platform.tenants.manage`). A new key signs connection tokens from now on; earlier keys still verify the tokens they signed for ten minutes, or no more with `retirePrevious` (a key that may have leaked: connections not yet opened with its tokens are refused). Keys also rotate by themselves once a day.',
    body: { schema: RotateSigningKeysInputSchema },
    responses: { 201: { description: 'The new key and the earlier keys still verifying', schema: RotatedSigningKeysSchema } },
  },
  [`GET ${V4_BASE}/realtime/alerts`]: {
    operationId: 'realtimeAlerts',
    summary: "Delivery diagnostics of the tenant's realtime events",
    tag: 'Realtime',
    description: "Connections across every instance, how far they are behind, events dropped, and what needs attention. The tenant is `tenant_id`, else the caller's.",
    query: tenantQuery,
    responses: { 200: { description: 'The diagnostics', schema: AlertsSchema } },
  },
  [`POST ${V4_BASE}/webhooks/:tenantId/endpoints`]: {
    operationId: 'createWebhookEndpoint',
    summary: 'Create an inbound webhook endpoint',
    tag: 'Webhooks',
    description: 'For tenant administrators, with the `webhooks` capability. The answer holds the signing secret; no other answer does.',
    path: tenantPath,
    body: { schema: CreateEndpointInputSchema },
    responses: { 201: { description: 'The endpoint, with its secret', schema: EndpointWithSecretSchema } },
    errors: [409],
  },
  [`GET ${V4_BASE}/webhooks/:tenantId/endpoints`]: {
    operationId: 'listWebhookEndpoints',
    summary: "The tenant's webhook endpoints",
    tag: 'Webhooks',
    path: tenantPath,
    responses: { 200: { description: 'The endpoints, by source', schema: listOf(EndpointSchema) } },
  },
  [`GET ${V4_BASE}/webhooks/:tenantId/endpoints/:source`]: {
    operationId: 'getWebhookEndpoint',
    summary: 'A webhook endpoint',
    tag: 'Webhooks',
    path: { ...tenantPath, source: SourceSchema },
    responses: { 200: { description: 'The endpoint', schema: EndpointSchema } },
  },
  [`PATCH ${V4_BASE}/webhooks/:tenantId/endpoints/:source`]: {
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    tag: 'Webhooks',
    path: { ...tenantPath, source: SourceSchema },
    body: { schema: EndpointChangesSchema },
    responses: { 200: { description: 'The endpoint', schema: EndpointSchema } },
  },
  [`DELETE ${V4_BASE}/webhooks/:tenantId/endpoints/:source`]: {
    operationId: 'deleteWebhookEndpoint',
    summary: 'Remove a webhook endpoint and its deliveries',
    tag: 'Webhooks',
    path: { ...tenantPath, source: SourceSchema },
    responses: { 204: { description: 'Removed' } },
  },
  [`POST ${V4_BASE}/webhooks/:tenantId/endpoints/:source/rotate-secret`]: {
    operationId: 'rotateWebhookSecret',
    summary: "Replace a webhook endpoint's secret",
    tag: 'Webhooks',
    description:
      'The new secret is in this answer only. The secret it replaces keeps working for 24 hours (until `previousSecretExpiresAt`), so that senders can switch; `revokePrevious: true` (in the body, or `?revokePrevious=true`) stops it at once, for a leaked secret. An older secret stops at once.',
    path: { ...tenantPath, source: SourceSchema },
    query: { revokePrevious: param(RotateWebhookSecretInputSchema.shape.revokePrevious, { description: 'May be given in the body instead' }) },
    body: { schema: RotateWebhookSecretInputSchema.omit({ source: true }), required: false },
    responses: { 200: { description: 'The endpoint, with its new secret', schema: RotatedEndpointSchema } },
  },
  [`GET ${V4_BASE}/webhooks/:tenantId/endpoints/:source/deliveries`]: {
    operationId: 'listWebhookDeliveries',
    summary: "A webhook endpoint's deliveries, newest first",
    tag: 'Webhooks',
    description: `Refused deliveries too (\`status\` \`rejected\`, with the \`reason\`): the newest ${REFUSED_SAMPLE_SIZE} of the endpoint; \`GET .../refusals\` counts them all.`,
    path: { ...tenantPath, source: SourceSchema },
    query: { status: ListDeliveriesInputSchema.shape.status, limit: ListDeliveriesInputSchema.shape.limit, offset: ListDeliveriesInputSchema.shape.offset },
    responses: { 200: { description: 'A page of deliveries', schema: DeliveryPageSchema } },
  },
  [`GET ${V4_BASE}/webhooks/:tenantId/endpoints/:source/refusals`]: {
    operationId: 'listWebhookRefusals',
    summary: "How many deliveries a webhook endpoint refused, per hour and reason, newest first",
    tag: 'Webhooks',
    description: `Every refused delivery is counted here, over the last 30 days; only the newest ${REFUSED_SAMPLE_SIZE} of an endpoint are kept as deliveries (\`status\` \`rejected\`). \`refused\` sums all windows.`,
    path: { ...tenantPath, source: SourceSchema },
    query: { limit: ListRefusalsInputSchema.shape.limit, offset: ListRefusalsInputSchema.shape.offset },
    responses: { 200: { description: 'A page of hourly windows', schema: RefusalPageSchema } },
  },
  [`GET ${V4_BASE}/webhooks/:tenantId/deliveries/:deliveryId`]: {
    operationId: 'getWebhookDelivery',
    summary: 'A webhook delivery, with its verified payload',
    tag: 'Webhooks',
    path: { ...tenantPath, deliveryId: DeliveryRefSchema.shape.deliveryId },
    responses: { 200: { description: 'The delivery', schema: DeliveryDetailSchema } },
  },
  [`POST ${V4_BASE}/webhooks/:tenantId/deliveries/:deliveryId/replay`]: {
    operationId: 'replayWebhookDelivery',
    summary: "Start a delivery's workflow again",
    tag: 'Webhooks',
    description: "A new delivery with the verified payload of this one (`replayOf`), started as the caller. A refused delivery has no payload to replay (409).",
    path: { ...tenantPath, deliveryId: DeliveryRefSchema.shape.deliveryId },
    responses: { 201: { description: 'The new delivery', schema: DeliverySchema } },
    errors: [409],
  },
  [`POST ${V4_BASE}/webhooks/:tenantId/:source`]: {
    operationId: 'receiveWebhook',
    summary: 'Deliver a webhook (called by the sending system)',
    tag: 'Webhooks',
    description: `No user token: \`${WEBHOOK_HEADERS.signature}: sha256=<hex>\` is the HMAC-SHA256, keyed by the endpoint's secret, of \`<${WEBHOOK_HEADERS.timestamp}>.<body>\` (the exact bytes sent), and the timestamp (Unix seconds) must be within the endpoint's tolerance (default 300 s). A signature or \`${WEBHOOK_HEADERS.deliveryId}\` seen before is refused (409), as are a bad or missing signature or timestamp (401) and a body over the endpoint's limit (413); every refusal is counted, and the newest ${REFUSED_SAMPLE_SIZE} are kept as deliveries. Deliveries spend a budget per endpoint, however the path spells the tenant (id in any letter case, or slug; a trailing slash). A verified delivery starts the endpoint's workflow with the body as input.`,
    security: 'webhookSignature',
    path: { ...tenantPath, source: SourceSchema },
    headers: {
      [WEBHOOK_HEADERS.timestamp]: param(ReceiveMetaSchema.shape.timestamp.unwrap(), { required: true, description: 'Unix time in seconds' }),
      [WEBHOOK_HEADERS.signature]: param(ReceiveMetaSchema.shape.signature.unwrap(), { required: true, description: '`sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>`' }),
      [WEBHOOK_HEADERS.deliveryId]: param(ReceiveMetaSchema.shape.deliveryId.unwrap(), { required: false, description: "The sender's id of the delivery; taken once" }),
    },
    body: { schema: z.record(z.string(), z.unknown()), description: 'A JSON object, read as the exact bytes signed' },
    responses: { 202: { description: 'Stored; the workflow was started (`accepted`) or could not be (`failed`, to be replayed)', schema: ReceivedSchema } },
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
  [`POST ${V4_BASE}/platform/provisioning/idp-apps`]: {
    operationId: 'ensureIdpApp',
    summary: "Create or confirm an app's OAuth client at the identity provider",
    tag: 'Identity-provider apps',
    description:
      "For an app enrolled in `tenant_id` (by `appKey`), for its tenant administrators and platform administrators. 201 creates the client and shows a confidential client's secret this once; 200 confirms it (its name and redirect URIs brought to the request), without a secret. With an external provider the client is registered there through dynamic client registration (RFC 7591); a provider without it is 501.",
    query: { tenant_id: param(EnsureIdpAppInputSchema.shape.tenant_id, { description: 'Tenant id or slug; may be given in the body instead' }) },
    body: { schema: EnsureIdpAppInputSchema.partial({ tenant_id: true }) },
    responses: {
      200: { description: 'The client existed; no secret', schema: IdpAppWithSecretSchema },
      201: { description: 'The client was created, with its secret (confidential clients) shown this once', schema: IdpAppWithSecretSchema },
    },
    errors: [409, 501, 502],
  },
  [`POST ${V4_BASE}/platform/provisioning/idp-apps/:clientId/rotate-secret`]: {
    operationId: 'rotateIdpAppSecret',
    summary: "Rotate an app client's secret",
    tag: 'Identity-provider apps',
    description:
      'The new secret is shown this once. The secret it replaces is still accepted at the token endpoint for an hour (until `previousSecretExpiresAt`), so that the app can be redeployed; `revokePrevious: true` (in the body, or `?revokePrevious=true`) stops it at once, for a leaked secret. An older secret stops at once. An external provider keeps its own secrets: 501.',
    path: { clientId: ClientIdSchema },
    query: { revokePrevious: param(RotateClientSecretInputSchema.shape.revokePrevious, { description: 'May be given in the body instead' }) },
    body: { schema: RotateClientSecretInputSchema.omit({ clientId: true }), required: false },
    responses: { 200: { description: 'The client with its new secret', schema: RotatedSecretSchema } },
    errors: [409, 501],
  },
  [`GET ${V4_BASE}/verticals/:key`]: {
    operationId: 'getVertical',
    summary: "An app's enrollment, its tenant and object types",
    tag: 'Verticals',
    description: "For members of the app's company tenant or of its child tenant, named by `tenant_id` (else the caller's tenant).",
    path: { key: VerticalKeySchema },
    query: verticalTenantQuery,
    responses: { 200: { description: 'The app', schema: VerticalSchema } },
  },
  [`GET ${V4_BASE}/verticals/:key/resources/:objectType`]: {
    operationId: 'listVerticalResources',
    summary: "List an app's resources of a type",
    tag: 'Verticals',
    path: verticalTypePath,
    query: {
      ...verticalTenantQuery,
      page: param(ListVerticalResourcesInputSchema.shape.page, { description: '1-based; not with `cursor`' }),
      limit: ListVerticalResourcesInputSchema.shape.limit,
      sort: param(ListVerticalResourcesInputSchema.shape.sort, { description: 'Fields, `-` for descending; default `-created_at`' }),
      where: param(ListVerticalResourcesInputSchema.shape.where, { json: true, description: 'A structured filter, as JSON' }),
      cursor: param(ListVerticalResourcesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
    },
    responses: { 200: { description: 'A page of resources', schema: ResourceListPageSchema.omit({ items: true }).extend({ data: z.array(ResourceSchema) }) } },
    errors: [409],
  },
  [`GET ${V4_BASE}/verticals/:key/resources/:objectType/:id`]: {
    operationId: 'getVerticalResource',
    summary: "Get an app's resource",
    tag: 'Verticals',
    path: verticalResourcePath,
    query: verticalTenantQuery,
    headers: { 'If-None-Match': param(EntityTag, { description: 'A version the client holds: 304 when it is current' }) },
    responses: {
      200: { description: 'The resource', schema: ResourceSchema, etag: true },
      304: { description: 'The version named by If-None-Match is current', etag: true },
    },
    errors: [409],
  },
  [`POST ${V4_BASE}/verticals/:key/resources/:objectType`]: {
    operationId: 'createVerticalResource',
    summary: 'Create a resource of an app',
    tag: 'Verticals',
    path: verticalTypePath,
    query: verticalTenantQuery,
    headers: { 'Idempotency-Key': param(IdempotencyKeySchema, { description: 'A retry with the same key and body answers the first answer' }) },
    body: { schema: CreateVerticalResourceInputSchema.omit({ key: true, type: true, idempotencyKey: true }) },
    responses: { 201: { description: 'The created resource', schema: ResourceSchema, etag: true } },
    errors: [409],
  },
  [`PUT ${V4_BASE}/verticals/:key/resources/:objectType/:id`]: {
    operationId: 'replaceVerticalResource',
    summary: "Replace an app's resource at a version",
    tag: 'Verticals',
    description: 'The version replaced is named by `version` in the body or by `If-Match`; one is required.',
    path: verticalResourcePath,
    query: verticalTenantQuery,
    headers: { 'If-Match': param(EntityTag, { description: 'The version replaced (`"3"`), or `*`' }) },
    body: { schema: ReplaceVerticalResourceInputSchema.omit({ key: true, type: true, id: true, ifMatch: true }) },
    responses: { 200: { description: 'The replaced resource', schema: ResourceSchema, etag: true } },
    errors: [409, 428],
  },
  [`DELETE ${V4_BASE}/verticals/:key/resources/:objectType/:id`]: {
    operationId: 'deleteVerticalResource',
    summary: "Delete an app's resource",
    tag: 'Verticals',
    path: verticalResourcePath,
    query: verticalTenantQuery,
    headers: { 'If-Match': param(EntityTag, { description: 'Delete only at this version (`"3"`)' }) },
    responses: { 204: { description: 'Deleted' } },
    errors: [409],
  },
  [`POST ${V4_BASE}/data/resources/:tenantId/search`]: {
    operationId: 'searchTenantResources',
    summary: "Search resources by their types' search fields",
    tag: 'Resources',
    description:
      "Ranks the tenant's resources of types that declare `searchFields` by the projection of those fields: `fulltext` (BM25), `vector` (cosine similarity of embeddings) or `hybrid` (their weighted sum, the default). Scores lie in 0..1, higher is better. Where no vector store is configured, `hybrid` ranks by full text (the answer's `mode` says so) and `vector` is a 400. A configured embedding model that fails to embed the query is 502.",
    path: tenantPath,
    body: { schema: ResourceSearchInputSchema },
    responses: { 200: { description: 'The best matches, best first', schema: ResourceSearchResultSchema } },
    errors: [502],
  },
  [`POST ${V4_BASE}/data/documents/upload`]: {
    operationId: 'uploadDocuments',
    summary: 'Upload documents and process them',
    tag: 'Documents',
    description:
      'A form with one or more files (`files`, up to 20), each streamed to the blob store and judged by its content; each becomes a document whose job classifies and indexes it. `tenant_id` in the query string or as a field before the files. All files or none.',
    query: tenantQuery,
    body: { multipart: V4UploadFormSchema.extend({ processing_mode: z.literal('full').optional() }), files: { files: { description: 'The documents', multiple: MAX_V4_UPLOAD_FILES, required: true } }, description: 'The files and their description' },
    responses: { 201: { description: 'The documents, each with its job (`jobId`)', schema: listOf(DocumentSchema) } },
    errors: [409, 415],
  },
  [`POST ${V4_BASE}/data/documents/classify`]: {
    operationId: 'classifyDocuments',
    summary: 'Upload documents and classify them',
    tag: 'Documents',
    description: 'As upload, but each document is classified at once (no indexing); the answer carries each classification.',
    query: tenantQuery,
    body: {
      multipart: V4UploadFormSchema.extend({ processing_mode: z.literal('classification').optional() }),
      files: { files: { description: 'The documents', multiple: MAX_V4_UPLOAD_FILES, required: true } },
      description: 'The files and their description',
    },
    responses: { 201: { description: 'The documents with their classification', schema: listOf(DocumentSchema) } },
    errors: [409, 415],
  },
  [`GET ${V4_BASE}/data/documents/records/:documentId`]: {
    operationId: 'getDocumentRecord',
    summary: "A document's record: storage path, status, classification, chunk count",
    tag: 'Documents',
    path: { documentId: DocumentRefSchema.shape.id },
    query: tenantQuery,
    responses: { 200: { description: 'The document', schema: DocumentSchema } },
  },
  [`POST ${V4_BASE}/data/documents/rag-index`]: {
    operationId: 'submitIndexJob',
    summary: 'Submit an indexing job for a document',
    tag: 'Documents',
    description: 'Starts the job (a Temporal workflow `document-<id>-index`) and answers at once; read its state at `GET /data/documents/rag-index/{jobId}`.',
    body: { schema: SubmitIndexJobFieldsSchema.extend({ tenant_id: TenantRefSchema.optional() }) },
    responses: { 202: { description: 'The job, queued', schema: DocumentJobSchema } },
    errors: [409],
  },
  [`GET ${V4_BASE}/data/documents/rag-index/:jobId`]: {
    operationId: 'getIndexJob',
    summary: 'The state of an indexing job',
    tag: 'Documents',
    path: JobRefSchema.shape,
    query: tenantQuery,
    responses: { 200: { description: 'The job', schema: DocumentJobSchema } },
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

/** Entries of the tables above as routes, until each is declared beside its handler. */
export function legacyRoutes(base: string, docs: Record<string, RouteDoc>): Route[] {
  return Object.entries(docs).map(([key, doc]) => {
    const [method, template] = key.split(' ') as [HttpMethod, string];
    const { path, query, headers, body, responses, ...rest } = doc;
    return {
      method,
      path: template.slice(base.length),
      procedure: 'health.check',
      tenant: 'none',
      input: { path: path as Record<string, ParamDoc>, query, headers, body },
      output: responses,
      docs: rest,
      sample: {},
      handler: () => undefined,
    } as Route;
  });
}
