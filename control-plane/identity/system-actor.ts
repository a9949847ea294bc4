import type { Actor } from './identity.schema.ts';

/**
 * The actor with which the platform itself works in one tenant: the operator reading or
 * provisioning a tenant's storage, a workflow's activity running an execution's step. It never
 * comes through a procedure, so no permission is checked for it, and it holds none: a service that
 * checks a permission itself refuses it. What it may do is what the service it calls does; every
 * statement it makes runs in `tenantId`'s transaction, under that tenant's row-level security, so
 * it cannot reach another tenant's rows. `onBehalfOf` names the user for whom it acts (an
 * execution's starter, recorded as the author of what the step writes); without it there is none.
 */
export function systemActor(tenantId: string, options: { onBehalfOf?: string } = {}): Actor {
  return { userId: options.onBehalfOf ?? '', email: '', tenantId, tenantSlug: '', roles: [], permissions: new Set() };
}
