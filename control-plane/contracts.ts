/**
 * What crosses the control plane's boundary, and nothing else: what api-edge imports (the router
 * type and the port it calls, errors, transport and telemetry helpers, and the schemas its route
 * declarations validate and document with), and what workers and the start-up scripts import.
 * The CLI imports nothing from here: its wire types are generated from the OpenAPI documents.
 */
export type { AppRouter } from './app/root-router.ts';
export type { DocumentJobs } from './documents/documents.jobs.ts';
export type { OrchestrateJobs } from './orchestrate/orchestrate.jobs.ts';
export type { StorageJobs } from './storage/storage.jobs.ts';
export type { TenantJobs } from './tenants/tenants.jobs.ts';
export type { Identity } from './identity/identity.schema.ts';
export type { Resource, ResourcePage } from './resources/resources.schema.ts';
export type { User } from './users/users.schema.ts';
export type { Execution } from './orchestrate/orchestrate.schema.ts';
export { toAppErrorBody } from './trpc/error-map.ts';
export { AppErrorBodySchema, FileTooLargeError, ForbiddenError, HTTP_STATUS, PayloadTooLargeError, RateLimitError, ServiceUnavailableError, StorageQuotaError, UnauthorizedError, ValidationError, type AppErrorBody, type ErrorCode } from './errors.ts';
export {
  untrusted,
  type CallContext,
  type ControlPlane,
  type Domain,
  type PortInput,
  type ProcedureName,
  type SubscriptionName,
  type UploadBody,
  type UploadName,
  type Untrusted,
} from './app/control-plane.ts';
export { detachedByteStream, encodeUploadMeta, UPLOAD_META_HEADER } from './trpc/upload-body.ts';
export { CONTROL_PLANE_TOKEN_HEADER } from './app/control-plane-token.ts';
export { unstorableInputError } from './json/unstorable-input.ts';
export { metricsText, observeHttp, rateLimitRefusals } from './telemetry/metrics.ts';
export { newTraceparent, parseTraceparent, requestIdFrom, traceIdOf, withTrace, REQUEST_ID_HEADER, TRACEPARENT_HEADER, type TraceFields } from './telemetry/trace-context.ts';

/** The schemas the procedures validate with, from which the edge declares and documents its routes (api-edge/routes). */
export { AppSchema, CreateAppInputSchema } from './apps/apps.schema.ts';
export { MeSchema, UpdateProfileInputSchema } from './identity/identity.schema.ts';
export { CreateObjectTypeInputSchema, ObjectTypeSchema, UpdateObjectTypeInputSchema } from './object-types/object-types.schema.ts';
export {
  ExecuteInputSchema,
  ExecutionRefSchema,
  ExecutionSchema,
  ListExecutionsInputSchema,
  StepDefinitionSchema,
  WorkflowDefinitionSchema,
} from './orchestrate/orchestrate.schema.ts';
export {
  BatchCreateInputSchema,
  BatchDeletedSchema,
  BatchDeleteInputSchema,
  BatchUpdateInputSchema,
  CountModeSchema,
  CreateResourceInputSchema,
  FileRefSchema,
  IdempotencyKeySchema,
  ResourceHistoryInputSchema,
  ResourceHistoryPageSchema,
  ListResourcePageInputSchema,
  ListResourcesInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceDataSchema,
  ResourceListPageSchema,
  ResourcePageSchema,
  ResourceRefSchema,
  ResourceSchema,
} from './resources/resources.schema.ts';
export { BackendSelectionSchema, DoctorReportSchema, ProvisionInputSchema, ProvisionOutcomeSchema, StorageStatusSchema, SyncSchemaInputSchema, SyncSchemaOutcomeSchema } from './storage/storage.schema.ts';
export {
  CreateChildTenantInputSchema,
  CreateRootTenantInputSchema,
  FindUserByEmailInputSchema,
  MembershipSchema,
  PlatformUserSchema,
  ProvisionSelfInputSchema,
  TenantMembershipSchema,
  TenantRefSchema,
  TenantSchema,
  UserRefSchema,
} from './tenants/tenants.schema.ts';
export { UploadMetaSchema } from './trpc/upload-body.ts';
export { ListUsersInputSchema, UpdateUserInputSchema, UserRefInputSchema, UserSchema } from './users/users.schema.ts';
export { AggregateResourcesInputSchema, AggregateResultSchema, QueryResourcesInputSchema, ResourceQueryPageSchema } from './resources/resource-queries.schema.ts';
export { ActionResultSchema, ApplyActionInputSchema } from './resources/resource-actions.schema.ts';
export {
  CatalogSchema,
  CapabilitySchema,
  EvaluateInputSchema,
  EvaluationSchema,
  OverrideInputSchema,
  OverrideSchema,
  SetPlanInputSchema,
  TenantPlanSchema,
} from './capabilities/capabilities.schema.ts';
export {
  AlertsSchema,
  NegotiateInputSchema,
  NegotiationSchema,
  EventIdSchema,
  RotatedSigningKeysSchema,
  RotateSigningKeysInputSchema,
  StreamInputSchema,
  type StreamMessage,
} from './realtime/realtime.schema.ts';
export {
  CreateEndpointInputSchema,
  DeliveryDetailSchema,
  DeliveryPageSchema,
  DeliveryRefSchema,
  DeliverySchema,
  EndpointChangesSchema,
  EndpointSchema,
  EndpointWithSecretSchema,
  ListDeliveriesInputSchema,
  ListRefusalsInputSchema,
  ReceivedSchema,
  ReceiveMetaSchema,
  RefusalPageSchema,
  REFUSED_SAMPLE_SIZE,
  RESERVED_SOURCES as RESERVED_WEBHOOK_SEGMENTS,
  RotatedEndpointSchema,
  RotateSecretInputSchema as RotateWebhookSecretInputSchema,
  SourceSchema,
} from './webhooks/webhooks.schema.ts';
export { WEBHOOK_HEADERS } from './webhooks/webhook-signature.ts';
export {
  ChatEventSchema,
  ConversationListSchema,
  ConversationMessagesSchema,
  ResumeChatInputSchema,
  SendChatInputSchema,
  WorkflowChatAnswerSchema,
  WorkflowChatBodySchema,
  WorkflowChatInputSchema,
  type ChatStreamItem,
} from './chat/chat.schema.ts';
export {
  ReadinessInputSchema,
  ReadinessSchema,
  RuntimeRequestInputSchema,
  RuntimeRequestSchema,
  WorkflowStatusInputSchema,
  WorkflowStatusSchema,
} from './runtime/runtime.schema.ts';
export {
  CreateDatasetInputSchema,
  DatasetRefSchema,
  DatasetSchema,
  GeoReportInputSchema,
  GeoReportSchema,
  UpdateDatasetFieldsSchema,
  FeatureCollectionInputSchema,
  FeaturePageSchema,
  IngestOutcomeSchema,
  NearbyPlacesSchema,
  QueryFeaturesInputSchema,
  ResolvedLocationsSchema,
  ResolveLocationInputSchema,
  ReverseInputSchema,
} from './geo/geo.schema.ts';
export {
  ClientIdSchema,
  EnsureIdpAppInputSchema,
  IdpAppWithSecretSchema,
  RotatedSecretSchema,
  RotateSecretInputSchema as RotateClientSecretInputSchema,
} from './idp-apps/idp-apps.schema.ts';
export {
  CreateVerticalResourceInputSchema,
  ListVerticalResourcesInputSchema,
  ReplaceVerticalResourceInputSchema,
  UpdateVerticalResourceInputSchema,
  VerticalKeySchema,
  VerticalSchema,
} from './verticals/verticals.schema.ts';
export { ResourceSearchInputSchema, ResourceSearchResultSchema } from './search/search.schema.ts';
export {
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
  MAX_TAG_LENGTH,
  MAX_TAGS,
  type Document,
} from './documents/documents.schema.ts';
export { MAX_UPLOAD_BYTES } from './uploads/uploads.schema.ts';
export {
  ConfigAuditPageSchema,
  ConfigEntrySchema,
  ConfigKeySchema,
  ConfigSetSchema,
  ConfigSetSummarySchema,
  ConfigWriteOutcomeSchema,
  EnvironmentSchema as ConfigEnvironmentSchema,
  GetConfigInputSchema,
  LabelSchema as ConfigLabelSchema,
  ListConfigAuditInputSchema,
  PutConfigEntryInputSchema,
  WriteConfigBodySchema,
} from './config-store/config-store.schema.ts';
