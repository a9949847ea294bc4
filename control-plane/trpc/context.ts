import type { Actor, Identity, Principal } from '../auth/caller.ts';

/** How the base procedures learn who calls: the actor in a tenant, or the user naming none. */
export interface Callers {
  resolveActor(identity: Identity, tenantHint?: string): Promise<Actor>;
  resolveUser(identity: Identity): Promise<Principal>;
}

/**
 * What procedures reach through their context. The base procedures need `callers`; each domain's
 * router adds the service it calls (`declare module '../trpc/context.ts'`), and the composition
 * root (control-plane/app/services.ts) fills every member, so a router receives only its own.
 */
export interface ApiServices {
  callers: Callers;
}

/** Per-call context: who calls (already verified by the edge or the HTTP server) and the services. */
export interface Context {
  services: ApiServices;
  identity: Identity | null;
  /** Tenant named by the request (a v4 path, or the v3 `X-Tenant-Id` header), else the token's. */
  tenantHint?: string;
  /** What describes a streamed body (`ControlPlane.upload`), as sent: procedures that take one validate it. */
  uploadMeta?: unknown;
  /** The edge's request id and the W3C `traceparent` of the request, carried into logs and workflow starts. */
  requestId?: string;
  traceparent?: string;
}
