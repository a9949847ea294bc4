import type { Actor, Identity, Principal } from '../auth/caller.ts';

/** How the base procedures learn who calls: the actor in a tenant, or the user naming none. */
export interface Callers {
  resolveActor(identity: Identity, tenantHint?: string): Promise<Actor>;
  resolveUser(identity: Identity): Promise<Principal>;
}

/** The functions of `Callers`, by name: the API's context holds these of the identity service and no others (app/services.ts). */
export const CALLERS_API = ['resolveActor', 'resolveUser'] as const satisfies readonly (keyof Callers)[];

/**
 * What procedures reach through their context. The base procedures need `callers`; each domain's
 * router names the functions it calls once, in a list it exports (`RESOURCES_API`), and adds the
 * service to this interface as the `Pick` of that list (`declare module '../trpc/context.ts'`).
 * The composition root (`apiServicesOf`, control-plane/app/services.ts) fills every member with an
 * object holding exactly those functions, so a router cannot reach another, even by casting.
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
