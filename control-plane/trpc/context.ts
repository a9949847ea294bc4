import type { AppsService } from '../apps/apps.service.ts';
import type { HealthService } from '../health/health.service.ts';
import type { Identity } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import type { OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { SessionsService } from '../sessions/sessions.service.ts';
import type { StorageService } from '../storage/storage.service.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import type { UploadsService } from '../uploads/uploads.service.ts';
import type { UsersService } from '../users/users.service.ts';

export interface Services {
  identity: IdentityService;
  objectTypes: ObjectTypesService;
  resources: ResourcesService;
  users: UsersService;
  sessions: SessionsService;
  orchestrate: OrchestrateService;
  storage: StorageService;
  tenants: TenantsService;
  apps: AppsService;
  health: HealthService;
  uploads: UploadsService;
}

/** Per-call context: who calls (already verified by the edge or the HTTP server) and the services. */
export interface Context {
  services: Services;
  identity: Identity | null;
  /** Tenant named by the request (a v4 path, or the v3 `X-Tenant-Id` header), else the token's. */
  tenantHint?: string;
  /** What describes a streamed body (`ControlPlane.upload`), as sent: procedures that take one validate it. */
  uploadMeta?: unknown;
  /** The edge's request id and the W3C `traceparent` of the request, carried into logs and workflow starts. */
  requestId?: string;
  traceparent?: string;
}
