import type { Identity } from '../identity/identity.schema.ts';
import type { Services } from '../app/services.ts';

/** Declared in control-plane/app/services.ts beside their composition; re-exported for the modules that take it from the context. */
export type { Services };

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
