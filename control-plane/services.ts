import { createLocalModel } from './ai/local-model.ts';
import { createAppsService } from './apps/apps.service.ts';
import type { ChatModel } from './ai/model.ts';
import type { BlobStore } from './blobs/blob-store.ts';
import type { Db } from './db/client.ts';
import { createHealthService } from './health/health.service.ts';
import { createOrchestrateService } from './orchestrate/orchestrate.service.ts';
import type { WorkflowsPort } from './temporal/workflows.port.ts';
import { createIdentityService } from './identity/identity.service.ts';
import { createObjectTypesService } from './object-types/object-types.service.ts';
import { createResourcesService } from './resources/resources.service.ts';
import { createSessionsService } from './sessions/sessions.service.ts';
import { createStorageService } from './storage/storage.service.ts';
import { createTenantsService } from './tenants/tenants.service.ts';
import type { Services } from './trpc/context.ts';
import { createUploadsService } from './uploads/uploads.service.ts';
import { createUsersService } from './users/users.service.ts';

/** Composition of the control plane's services over one database, a workflow engine, an AI model and a blob store. */
export function createServices(deps: { db: Db; workflows?: WorkflowsPort; model?: ChatModel; blobs: BlobStore; uploadLimitBytes?: number }): Services {
  const objectTypes = createObjectTypesService(deps);
  const resources = createResourcesService({ db: deps.db, objectTypes });
  const identity = createIdentityService(deps);
  const tenants = createTenantsService({ db: deps.db, workflows: deps.workflows, identity });
  return {
    identity,
    objectTypes,
    resources,
    users: createUsersService(deps),
    sessions: createSessionsService(deps),
    orchestrate: createOrchestrateService({ db: deps.db, workflows: deps.workflows, resources, model: deps.model ?? createLocalModel() }),
    storage: createStorageService({ db: deps.db, workflows: deps.workflows, blobs: deps.blobs }),
    tenants,
    apps: createAppsService({ db: deps.db, tenants }),
    health: createHealthService(deps),
    uploads: createUploadsService({ blobs: deps.blobs, maxBytes: deps.uploadLimitBytes }),
  };
}
