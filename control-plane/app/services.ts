import { createLocalModel } from '../ai/local-model.ts';
import { createOpenAiCompatibleModel, type OpenAiCompatibleSettings } from '../ai/openai-compatible.ts';
import { createAppsDeclared, type AppsDeclared } from '../apps/apps.declared.ts';
import { createAppsService, type AppsService } from '../apps/apps.service.ts';
import { APP_OBJECT_TYPE } from '../apps/apps.schema.ts';
import { keyedResources } from '../resources/keyed-resources.ts';
import { createSearchReprojection, type SearchReprojection } from '../resources/search-reprojection.ts';
import { reprojectionRequests } from '../object-types/reprojection-requests.ts';
import { createAnsweringService, retrieveFromSearch, type AnsweringService, type Retrieve } from '../chat/answering.ts';
import type { AnswerStreamSettings } from '../chat/answer-streams.ts';
import { createChatService, type ChatService } from '../chat/chat.service.ts';
import { sweepPastStepCharges } from '../chat/step-charges.ts';
import { createConfigStoreService, type ConfigStoreService } from '../config-store/config-store.service.ts';
import { createRuntimeService, type RuntimeService } from '../runtime/runtime.service.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Db } from '../db/client.ts';
import { createDeclarationsService } from '../declarations/declarations.service.ts';
import { createGeoService, type GeoService } from '../geo/geo.service.ts';
import { createDocumentFiles } from '../documents/document-files.ts';
import { createDocumentJobs, type DocumentJobs } from '../documents/documents.jobs.ts';
import { createDocumentsService, type DocumentsService } from '../documents/documents.service.ts';
import { createExtractor, type ExtractionLimits } from '../extract/extractor.ts';
import { createHealthService, type HealthService } from '../health/health.service.ts';
import { appClientBindingOf, createIdpAppsService, type IdentityProviderSettings, type IdpAppsService } from '../idp-apps/idp-apps.service.ts';
import { createCapabilitiesService, type CapabilitiesService } from '../capabilities/capabilities.service.ts';
import { tenantPlanSetter } from '../tenants/tenant-ports.ts';
import type { Plan } from '../capabilities/capabilities.schema.ts';
import { createOrchestrateJobs, type OrchestrateJobs } from '../orchestrate/orchestrate.jobs.ts';
import { createOrchestrateService, type OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import { createIdentityService, type IdentityService } from '../identity/identity.service.ts';
import type { ClientPolicy } from '../identity/callers.ts';
import { createObjectTypesService, type ObjectTypesService } from '../object-types/object-types.service.ts';
import { createRealtimeService, type RealtimeService } from '../realtime/realtime.service.ts';
import { createResourceFilesService, type ResourceFilesService } from '../resources/resource-files.ts';
import { createResourcesService, type ResourcesService } from '../resources/resources.service.ts';
import { searchVectorsFromEnv } from '../search/search-config.ts';
import { createSearchService, type SearchService } from '../search/search.service.ts';
import type { Embedder } from '../search/embeddings.ts';
import type { VectorStore } from '../search/vector-store.ts';
import { createSessionsService, type SessionsService } from '../sessions/sessions.service.ts';
import { createStorageBackends } from '../storage/storage-backends.ts';
import { createStorageJobs, type StorageJobs } from '../storage/storage.jobs.ts';
import { createStorageDeclared, type StorageDeclared } from '../storage/storage.declared.ts';
import { createStorageService, type StorageService } from '../storage/storage.service.ts';
import { createStorageUsage, deleteExpiredStorageReservations, meteredBlobStore } from '../capabilities/storage-usage.ts';
import { createTenantLifecycle } from '../tenants/tenant-lifecycle.ts';
import { createTenantsDeclared, type TenantsDeclared } from '../tenants/tenants.declared.ts';
import { createTenantJobs, type TenantJobs } from '../tenants/tenants.jobs.ts';
import { createTenantsService, type TenantsService } from '../tenants/tenants.service.ts';
import { createUploadsService, type UploadsService } from '../uploads/uploads.service.ts';
import { createUsersService, type UsersService } from '../users/users.service.ts';
import { createVerticalsService, type VerticalsService } from '../verticals/verticals.service.ts';
import { createWebhooksService, type WebhooksService } from '../webhooks/webhooks.service.ts';
import { mergeResealReports, type ResealReport } from '../secrets/reseal.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { resealWebhookSecrets } from '../webhooks/webhook-secret-reseal.ts';
import { createOutbox, type Outbox } from '../outbox/outbox.service.ts';
import { sweepExpiredIdempotencyKeys } from '../resources/idempotency-keys.ts';
import { createSweeps, deleteInBatches, staleUploadsSweep, type Sweeps } from '../sweeps/sweeps.service.ts';
import { CALLERS_API, type ApiServices, type Callers } from '../trpc/context.ts';
import { APPS_API } from '../apps/apps.router.ts';
import { CAPABILITIES_API } from '../capabilities/capabilities.router.ts';
import { CHAT_API } from '../chat/chat.router.ts';
import { CONFIG_STORE_API } from '../config-store/config-store.router.ts';
import { DOCUMENTS_API } from '../documents/documents.router.ts';
import { GEO_API } from '../geo/geo.router.ts';
import { HEALTH_API } from '../health/health.router.ts';
import { IDENTITY_API } from '../identity/identity.router.ts';
import { IDP_APPS_API } from '../idp-apps/idp-apps.router.ts';
import { OBJECT_TYPES_API } from '../object-types/object-types.router.ts';
import { ORCHESTRATE_API } from '../orchestrate/orchestrate.router.ts';
import { REALTIME_API } from '../realtime/realtime.router.ts';
import { RESOURCE_FILES_API, RESOURCES_API } from '../resources/resources.router.ts';
import { RUNTIME_API } from '../runtime/runtime.router.ts';
import { SEARCH_API } from '../search/search.router.ts';
import { STORAGE_API } from '../storage/storage.router.ts';
import { SESSIONS_API } from '../sessions/sessions.router.ts';
import { TENANTS_API } from '../tenants/tenants.router.ts';
import { UPLOADS_API } from '../uploads/uploads.router.ts';
import { USERS_API } from '../users/users.router.ts';
import { VERTICALS_API } from '../verticals/verticals.router.ts';
import { WEBHOOKS_API } from '../webhooks/webhooks.router.ts';
import { OPERATOR_FUNCTIONS, type OperatorServices } from '../operator/operator.ts';
import type { WorkerServices } from '../../workers/activities/index.ts';

/** Every domain's service: what procedures reach through their context, and what the workers' activities are built from. */
export interface Services {
  callers: Callers;
  identity: IdentityService;
  objectTypes: ObjectTypesService;
  resources: ResourcesService;
  resourceFiles: ResourceFilesService;
  users: UsersService;
  sessions: SessionsService;
  orchestrate: OrchestrateService;
  orchestrateJobs: OrchestrateJobs;
  capabilities: CapabilitiesService;
  storage: StorageService;
  storageDeclared: StorageDeclared;
  storageJobs: StorageJobs;
  tenants: TenantsService;
  tenantsDeclared: TenantsDeclared;
  tenantJobs: TenantJobs;
  apps: AppsService;
  appsDeclared: AppsDeclared;
  health: HealthService;
  uploads: UploadsService;
  idpApps: IdpAppsService;
  verticals: VerticalsService;
  realtime: RealtimeService;
  webhooks: WebhooksService;
  search: SearchService;
  geo: GeoService;
  documents: DocumentsService;
  documentJobs: DocumentJobs;
  answering: AnsweringService;
  chat: ChatService;
  runtime: RuntimeService;
  configStore: ConfigStoreService;
  /** Seals every stored secret (webhook and configuration secrets, realtime signing keys) under the current operator key: plain ones and those under a previous key. */
  resealStoredSecrets(): Promise<ResealReport>;
  /** Workflow starts written with the work they start; its dispatcher runs in every process that serves the control plane or runs workers. */
  outbox: Outbox;
  /** Scheduled clean-up (stale staged uploads, expired idempotency keys), run in every such process too. */
  sweeps: Sweeps;
  /** At start-up, the search projections a migration asked for (a built-in type's search fields changed). */
  searchReprojection: SearchReprojection;
  /** Ends what the services started in the process (the document extractor's OCR worker). */
  close(): Promise<void>;
}

/** The AI model settings: an OpenAI-compatible endpoint replaces the local model when given; how answer streams are kept. */
export interface AiDeps {
  ai?: OpenAiCompatibleSettings;
  chatStreams?: AnswerStreamSettings;
  /** Where answers find the tenant's passages; default: hybrid search of the search service. */
  retrieve?: Retrieve;
}

/** How often each sweep runs, across the processes of a deployment. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/** Where the built-in identity provider is when nothing says: the edge's default public origin. */
const DEFAULT_IDENTITY_PROVIDER: IdentityProviderSettings = { kind: 'built-in', issuer: () => 'http://localhost:8080' };

/**
 * Composition of the control plane's services over one database, a workflow engine, an AI model
 * and a blob store. A domain reaches another only through the service given to it here, never
 * through the other's repo.
 */
export function createServices(
  deps: {
    db: Db;
    workflows?: WorkflowsPort;
    blobs: BlobStore;
    uploadLimitBytes?: number;
    /** The plan of tenants none was set for (the operator's `DEFAULT_PLAN`); default the catalog's. */
    defaultPlan?: Plan;
    /** The identity provider apps register their OAuth clients with; default the built-in one at the default origin. */
    identityProvider?: IdentityProviderSettings;
    /** Which clients an external provider's tokens are accepted from (`AUTH_FIRST_PARTY_CLIENTS`, `AUTH_TOKENS_WITHOUT_CLIENT`); none: the built-in provider's. */
    clients?: ClientPolicy;
    /** How long an administrator's invitation can be accepted (`INVITATION_TTL_DAYS`); default 7 days. */
    invitationTtlMs?: number;
    /** Seals the secrets the platform keeps usable (webhook and configuration secrets, realtime signing keys) with the operator key; only processes that serve the API need it. */
    secrets?: SecretBox;
    /** Embedding model and vector store of search; default from the environment (control-plane/search/search-config.ts), null: full text only. */
    searchVectors?: { embedder: Embedder | null; vectors: VectorStore | null };
    /** Limits of reading one document (time, heap, what a ZIP package unpacks to); default DEFAULT_EXTRACTION_LIMITS. */
    extractionLimits?: Partial<ExtractionLimits>;
  } & AiDeps,
): Services {
  const capabilities = createCapabilitiesService({ ...deps, setTenantPlan: tenantPlanSetter(deps.db) });
  // Every byte written to a tenant's blob area counts against its storage quota.
  const storageUsage = createStorageUsage({ db: deps.db, capabilities });
  const blobs = meteredBlobStore(deps.blobs, storageUsage);
  // A change of a type's searchFields rebuilds its resources' projections through the resources service made below.
  const objectTypes = createObjectTypesService({
    db: deps.db,
    searchFieldsChanged: (tx, objectType) => resources.reproject(tx, objectType),
    // Declared indexes are built in the background by the storage service made below.
    indexBuilds: { request: (tenantId) => storage.indexBuilds.request(tenantId), statuses: (tenantId) => storage.indexBuilds.statuses(tenantId) },
  });
  const search = createSearchService({ db: deps.db, objectTypes, ...(deps.searchVectors ?? searchVectorsFromEnv(deps.db)) });
  // Actions start workflows through orchestrate, which reads resources: the call is bound to the service made below.
  const resources = createResourcesService({
    db: deps.db,
    objectTypes,
    actionWorkflows: { prepare: (tx, actor, execution) => orchestrate.prepareExecution(tx, actor, execution) },
    searchIndex: search.resourceIndex,
    removeFiles: (tenantId, ids) => resourceFiles.removeAllOf(tenantId, ids),
  });
  const resourceFiles = createResourceFilesService({ db: deps.db, objectTypes, blobs, capabilities, storageUsage, searchIndex: search.resourceIndex });
  const outbox = createOutbox({ db: deps.db, workflows: deps.workflows });
  const extractor = () => createExtractor({ limits: deps.extractionLimits });
  const documentsDeps = { db: deps.db, blobs, workflows: deps.workflows, outbox, capabilities, storageUsage, search, extractor };
  const documentFiles = createDocumentFiles(documentsDeps);
  const documents = createDocumentsService({ ...documentsDeps, files: documentFiles });
  const answering = createAnsweringService({
    models: { local: createLocalModel(), remote: deps.ai ? createOpenAiCompatibleModel(deps.ai) : undefined },
    resources,
    retrieve: deps.retrieve ?? retrieveFromSearch(search),
    readDocument: documents.passages,
  });
  const chat = createChatService({ db: deps.db, answering, capabilities, resources, streams: deps.chatStreams });
  const orchestrate = createOrchestrateService({ db: deps.db, workflows: deps.workflows, outbox, capabilities, chat });
  const identity = createIdentityService({ ...deps, appClient: appClientBindingOf(deps.db) });
  const declarations = createDeclarationsService();
  const tenantsDeps = { db: deps.db, workflows: deps.workflows, outbox, identity, declarations };
  const lifecycle = createTenantLifecycle(tenantsDeps);
  const tenants = createTenantsService({ ...tenantsDeps, lifecycle, invitationTtlMs: deps.invitationTtlMs });
  const tenantsDeclared = createTenantsDeclared({ ...tenantsDeps, lifecycle });
  const enrollments = keyedResources(APP_OBJECT_TYPE);
  const apps = createAppsService({ db: deps.db, tenants, identity, enrollments });
  const appsDeclared = createAppsDeclared({
    db: deps.db,
    tenants: { ...tenants, declare: tenantsDeclared.declare, removeDeclared: tenantsDeclared.removeDeclared },
    declarations,
    enrollments,
  });
  const storageBackends = createStorageBackends({ db: deps.db, workflows: deps.workflows, blobs, refusedChunks: search.refusedChunks });
  const storage = createStorageService({ db: deps.db, workflows: deps.workflows, blobs, backends: storageBackends });
  const realtime = createRealtimeService({ db: deps.db, capabilities, identity, secrets: deps.secrets });
  const configStore = createConfigStoreService({ db: deps.db, secrets: deps.secrets });
  const box = deps.secrets;
  return {
    callers: identity,
    identity,
    objectTypes,
    resources,
    resourceFiles,
    users: createUsersService({ db: deps.db, identity }),
    sessions: createSessionsService(deps),
    orchestrate,
    orchestrateJobs: createOrchestrateJobs({ db: deps.db, resources, answering, chat }),
    capabilities,
    storage,
    storageDeclared: createStorageDeclared({ backends: storageBackends }),
    storageJobs: createStorageJobs({ db: deps.db, backends: storageBackends }),
    tenants,
    tenantsDeclared,
    tenantJobs: createTenantJobs(tenantsDeps),
    apps,
    appsDeclared,
    health: createHealthService(deps),
    uploads: createUploadsService({ blobs, storageUsage, maxBytes: deps.uploadLimitBytes }),
    idpApps: createIdpAppsService({ db: deps.db, apps, tenants, identity, capabilities, provider: deps.identityProvider ?? DEFAULT_IDENTITY_PROVIDER }),
    verticals: createVerticalsService({ apps, tenants, objectTypes, resources }),
    search,
    realtime,
    webhooks: createWebhooksService({ db: deps.db, capabilities, orchestrate, secrets: deps.secrets }),
    answering,
    chat,
    runtime: createRuntimeService({ db: deps.db, chat, capabilities, tenants }),
    geo: createGeoService({ db: deps.db, capabilities }),
    configStore,
    resealStoredSecrets: async () =>
      mergeResealReports(box ? [await resealWebhookSecrets(deps.db, box), await configStore.resealStoredSecrets(), await realtime.resealStoredKeys()] : []),
    documents,
    documentJobs: createDocumentJobs({ db: deps.db, blobs, files: documentFiles }),
    outbox,
    searchReprojection: createSearchReprojection({ db: deps.db, requests: reprojectionRequests(deps.db), findType: objectTypes.find, searchIndex: search.resourceIndex }),
    sweeps: createSweeps({
      db: deps.db,
      sweeps: [
        staleUploadsSweep(deps.db, (tenantId) => documents.sweepStaleUploads(tenantId), SWEEP_EVERY_MS),
        { name: 'expired-idempotency-keys', everyMs: SWEEP_EVERY_MS, run: () => sweepExpiredIdempotencyKeys(deps.db) },
        { name: 'past-chat-step-charges', everyMs: SWEEP_EVERY_MS, run: () => sweepPastStepCharges(deps.db) },
        { name: 'expired-storage-reservations', everyMs: SWEEP_EVERY_MS, run: () => deleteInBatches(deps.db, deleteExpiredStorageReservations) },
      ],
    }),
    close: documentFiles.close,
  };
}

/** What the worker's activities are given: each domain's functions for workflows, nothing of the API. */
export function workerServicesOf(services: Services): WorkerServices {
  return { documents: services.documentJobs, orchestrate: services.orchestrateJobs, storage: services.storageJobs, tenants: services.tenantJobs };
}

/**
 * What the operator is given (the declarations of tenants and apps, storage readiness, and tenant
 * status changes): of each domain's `.declared.ts` interface, the functions the operator declares
 * it calls and no others. Built once, at start-up.
 */
export function operatorServicesOf(services: Services): OperatorServices {
  const of = OPERATOR_FUNCTIONS;
  return { tenants: only(services.tenantsDeclared, of.tenants), apps: only(services.appsDeclared, of.apps), storage: only(services.storageDeclared, of.storage) };
}

/**
 * The functions each member of the API's services holds: the lists the routers declare their
 * services with. The compiler holds this map to `ApiServices`: no member missing, no name outside
 * its router's declaration.
 */
export const API_FUNCTIONS = {
  callers: CALLERS_API,
  identity: IDENTITY_API,
  objectTypes: OBJECT_TYPES_API,
  resources: RESOURCES_API,
  resourceFiles: RESOURCE_FILES_API,
  users: USERS_API,
  sessions: SESSIONS_API,
  orchestrate: ORCHESTRATE_API,
  capabilities: CAPABILITIES_API,
  storage: STORAGE_API,
  tenants: TENANTS_API,
  apps: APPS_API,
  health: HEALTH_API,
  uploads: UPLOADS_API,
  idpApps: IDP_APPS_API,
  verticals: VERTICALS_API,
  realtime: REALTIME_API,
  webhooks: WEBHOOKS_API,
  search: SEARCH_API,
  geo: GEO_API,
  documents: DOCUMENTS_API,
  chat: CHAT_API,
  runtime: RUNTIME_API,
  configStore: CONFIG_STORE_API,
} as const satisfies { [K in keyof ApiServices]: readonly (keyof ApiServices[K])[] };

/** An object holding `keys` of `service` and nothing else, each function bound to the service it came from. */
function only<S extends object, const K extends keyof S>(service: S, keys: readonly K[]): Pick<S, K> {
  const view: Partial<Pick<S, K>> = {};
  for (const key of keys) {
    const value = service[key];
    view[key] = typeof value === 'function' ? value.bind(service) : value;
  }
  return Object.freeze(view as Pick<S, K>);
}

/**
 * What the in-process caller and the control plane's HTTP server take: the API's services, and
 * never the whole `Services` (its other members are refused), which would hand each router more
 * than it declares.
 */
export type NarrowApiServices = ApiServices & { readonly [K in Exclude<keyof Services, keyof ApiServices>]?: never };

/**
 * What the API's procedures are given (the in-process caller and the control plane's HTTP server):
 * of each service, the functions its router declares and no others. Built once, at start-up.
 */
export function apiServicesOf(services: Services): ApiServices {
  const of = API_FUNCTIONS;
  return {
    callers: only(services.callers, of.callers),
    identity: only(services.identity, of.identity),
    objectTypes: only(services.objectTypes, of.objectTypes),
    resources: only(services.resources, of.resources),
    resourceFiles: only(services.resourceFiles, of.resourceFiles),
    users: only(services.users, of.users),
    sessions: only(services.sessions, of.sessions),
    orchestrate: only(services.orchestrate, of.orchestrate),
    capabilities: only(services.capabilities, of.capabilities),
    storage: only(services.storage, of.storage),
    tenants: only(services.tenants, of.tenants),
    apps: only(services.apps, of.apps),
    health: only(services.health, of.health),
    uploads: only(services.uploads, of.uploads),
    idpApps: only(services.idpApps, of.idpApps),
    verticals: only(services.verticals, of.verticals),
    realtime: only(services.realtime, of.realtime),
    webhooks: only(services.webhooks, of.webhooks),
    search: only(services.search, of.search),
    geo: only(services.geo, of.geo),
    documents: only(services.documents, of.documents),
    chat: only(services.chat, of.chat),
    runtime: only(services.runtime, of.runtime),
    configStore: only(services.configStore, of.configStore),
  };
}
