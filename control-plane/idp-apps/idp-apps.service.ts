import { randomUUID } from 'node:crypto';
import type { AppsService } from '../apps/apps.service.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db, Tx } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError, NotImplementedError } from '../errors.ts';
import type { Principal } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import { hashClientSecret, newClientSecret, verifyClientSecret } from './client-secrets.ts';
import { createDynamicRegistration, type ClientMetadata, type DynamicRegistration } from './dynamic-registration.ts';
import {
  findClientBinding,
  countClients,
  findAppClient,
  findClientById,
  findProviderClient,
  findRegistration,
  findSecretHashes,
  insertAppClient,
  lockAppClient,
  replaceSecretHash,
  saveRegistration,
  updateAppClient,
} from './idp-apps.repo.ts';
import type { EnsuredIdpApp, EnsureIdpAppInput, IdpApp, ProviderClient, RotatedSecret } from './idp-apps.schema.ts';

/** The capability a tenant needs to register apps with the identity provider; its limit `maxClients`. */
export const IDP_APPS_CAPABILITY = 'identity.apps';

/** How long a client's replaced secret is still accepted after a rotation, unless the rotation revokes it. */
export const CLIENT_SECRET_OVERLAP_SECONDS = 3600;

/**
 * Which identity provider the platform signs users in with: the edge's built-in provider (at the
 * edge's public origin), or an external OIDC provider, where clients are registered through RFC 7591.
 */
export type IdentityProviderSettings =
  | { kind: 'built-in'; issuer: () => string }
  | { kind: 'external'; issuer: string; initialAccessToken?: string };

export type IdpAppsService = ReturnType<typeof createIdpAppsService>;

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** The tenant that registered an app's OAuth client, if any, and its granted scopes: how identity knows where and with what an app's token acts. */
export const appClientBindingOf = (db: Db) => (clientId: string) => db.system((tx) => findClientBinding(tx, clientId));

const sameScopes = (a: readonly string[] | null, b: readonly string[] | null) => (a === null || b === null ? a === b : sameList(a, b));

/**
 * The OAuth clients of apps at the identity provider. A tenant administrator of the app's tenant
 * (`tenants.manage`) or a platform administrator (`platform.tenants.manage`) registers one per app
 * (`ensure`: created once, confirmed and brought to the request afterwards) and rotates its secret.
 * With the built-in provider the platform keeps each secret as its scrypt hash and checks it when
 * the provider asks (`verifySecret`), so a client works at once, and a rotated secret stops after an
 * hour's overlap (or at once, for a leaked one);
 * with an external provider the client is registered there (RFC 7591), or the call is 501.
 */
export function createIdpAppsService(deps: {
  db: Db;
  apps: Pick<AppsService, 'findByKey'>;
  tenants: Pick<TenantsService, 'find'>;
  identity: Pick<IdentityService, 'permissionsIn'>;
  capabilities: Pick<CapabilitiesService, 'require'>;
  provider: IdentityProviderSettings;
  fetch?: typeof fetch;
}) {
  const { db, apps, tenants, identity, capabilities, provider } = deps;
  const external: DynamicRegistration | undefined =
    provider.kind === 'external' ? createDynamicRegistration({ issuer: provider.issuer, initialAccessToken: provider.initialAccessToken }, deps.fetch) : undefined;
  const currentIssuer = () => (provider.kind === 'external' ? external!.issuer : provider.issuer().replace(/\/+$/, ''));

  /** The caller's standing in a tenant: may they manage its clients, and are they in it at all. */
  async function standing(principal: Principal, tenantId: string | undefined) {
    const permissions = tenantId ? await identity.permissionsIn(principal.userId, tenantId) : undefined;
    const platform = principal.platformPermissions.has('platform.tenants.manage');
    return { manages: platform || !!permissions?.includes('tenants.manage'), sees: platform || permissions !== undefined };
  }

  /** Brings an existing client to the request: its name, redirect URIs and (when named) scopes; its kind never changes. */
  async function confirm(tx: Tx, existing: IdpApp, wanted: ClientMetadata, requestedScopes: string[] | undefined): Promise<IdpApp> {
    if (existing.tokenEndpointAuthMethod !== wanted.tokenEndpointAuthMethod) {
      throw new ConflictError(
        `the app's client authenticates with ${existing.tokenEndpointAuthMethod}, which cannot change; keep it or register the app again under another key`,
        { field: 'tokenEndpointAuthMethod', current: existing.tokenEndpointAuthMethod },
      );
    }
    const scopes = requestedScopes ?? existing.scopes;
    const sameClient = existing.displayName === wanted.displayName && sameList(existing.redirectUris, wanted.redirectUris);
    if (sameClient && sameScopes(existing.scopes, scopes)) return existing;
    // Scopes are the platform's own: the provider is asked only when the client itself changes.
    if (!external || sameClient) return updateAppClient(tx, existing.clientId, { displayName: wanted.displayName, redirectUris: wanted.redirectUris, scopes });
    const management = await db.system((system) => findRegistration(system, existing.clientId));
    const updated = await external.update(existing.clientId, management, wanted);
    if (updated.management && updated.management.registrationAccessToken !== management?.registrationAccessToken) {
      await db.system((system) => saveRegistration(system, existing.clientId, updated.management!));
    }
    return updateAppClient(tx, existing.clientId, { displayName: updated.displayName, redirectUris: updated.redirectUris, scopes });
  }

  async function activeTenant(principal: Principal, ref: string): Promise<Tenant> {
    const tenant = await tenants.find(ref);
    if (!(await standing(principal, tenant?.id)).manages) {
      throw new ForbiddenError(`registering apps with the identity provider needs tenants.manage in tenant "${ref}"`);
    }
    if (!tenant) throw new NotFoundError('tenant');
    if (tenant.status !== 'active') throw new ConflictError(`tenant "${tenant.slug}" is ${tenant.status}, not active`, { tenantStatus: tenant.status });
    return tenant;
  }

  return {
    /**
     * Creates the client of an app enrolled in the tenant (`created: true`, with the secret of a
     * confidential client, shown this once), or confirms the one it has at the current provider,
     * changing its name and redirect URIs to the request's. Concurrent calls for one app make one
     * client: an external provider is asked inside the transaction, under the lock (at most the
     * registration's timeouts), so that no second registration is made there either. Needs the
     * tenant's `identity.apps` capability; its `maxClients` limit counts clients.
     */
    async ensure(principal: Principal, input: EnsureIdpAppInput): Promise<EnsuredIdpApp> {
      const tenant = await activeTenant(principal, input.tenant_id);
      const app = await apps.findByKey(tenant.id, input.appKey);
      if (!app) throw new NotFoundError(`app "${input.appKey}" in tenant "${tenant.slug}"`);
      const { limits } = await capabilities.require(tenant.id, IDP_APPS_CAPABILITY);
      const issuer = currentIssuer();
      const wanted: ClientMetadata = { displayName: input.displayName, redirectUris: input.redirectUris, tokenEndpointAuthMethod: input.tokenEndpointAuthMethod };

      type Outcome = { answer: EnsuredIdpApp; management?: { registrationClientUri: string; registrationAccessToken: string } };
      const { answer, management } = await db.inTenant(tenant.id, async (tx): Promise<Outcome> => {
        await lockAppClient(tx, app.key, issuer);
        const existing = await findAppClient(tx, app.key, issuer);
        if (existing) return { answer: { created: false, app: await confirm(tx, existing, wanted, input.scopes) } };
        const maxClients = limits.maxClients;
        if (maxClients !== undefined && (await countClients(tx, issuer)) >= maxClients) {
          throw new ForbiddenError(`capability ${IDP_APPS_CAPABILITY} allows this tenant at most ${maxClients} identity-provider apps`);
        }
        const common = { appKey: app.key, issuer, createdBy: principal.userId, scopes: input.scopes ?? null };
        if (!external) {
          const clientSecret = wanted.tokenEndpointAuthMethod === 'none' ? undefined : newClientSecret();
          const stored = await insertAppClient(tx, {
            ...common,
            ...wanted,
            clientId: randomUUID(),
            provider: 'built-in',
            secretHash: clientSecret ? await hashClientSecret(clientSecret) : null,
          });
          return { answer: { created: true, app: { ...stored, ...(clientSecret ? { clientSecret } : {}) } } };
        }
        const registered = await external.register(wanted);
        const stored = await insertAppClient(tx, {
          ...common,
          clientId: registered.clientId,
          displayName: registered.displayName,
          redirectUris: registered.redirectUris,
          tokenEndpointAuthMethod: registered.tokenEndpointAuthMethod,
          provider: 'external',
          // The provider checks its own secrets: the platform keeps none.
          secretHash: null,
        });
        return { answer: { created: true, app: { ...stored, ...(registered.clientSecret ? { clientSecret: registered.clientSecret } : {}) } }, management: registered.management };
      });
      if (management) await db.system((tx) => saveRegistration(tx, answer.app.clientId, management));
      return answer;
    },

    /**
     * A new secret for a confidential client of the built-in provider, shown this once. The one it
     * replaces is still accepted for {@link CLIENT_SECRET_OVERLAP_SECONDS} (until
     * `previousSecretExpiresAt`), so the app can be redeployed without refusals, or stops at once
     * with `revokePrevious` (a leaked secret); an older one stops at once. Clients the caller
     * cannot see are 404; an external provider's, 501.
     */
    async rotateSecret(principal: Principal, clientId: string, options: { revokePrevious?: boolean } = {}): Promise<RotatedSecret> {
      const client = await db.system((tx) => findClientById(tx, clientId));
      const { manages, sees } = await standing(principal, client?.tenantId);
      if (!client || !sees) throw new NotFoundError('identity-provider app');
      if (!manages) throw new ForbiddenError("rotating an app's secret needs tenants.manage in its tenant");
      if (client.tokenEndpointAuthMethod === 'none') {
        throw new ConflictError('a public client (tokenEndpointAuthMethod none) has no secret to rotate', { field: 'tokenEndpointAuthMethod' });
      }
      if (client.provider === 'external') {
        throw new NotImplementedError(
          `the identity provider at ${client.issuer} keeps this client's secret, and dynamic client registration (RFC 7591, RFC 7592) has no way to rotate it: rotate it there`,
          { issuer: client.issuer },
        );
      }
      const clientSecret = newClientSecret();
      const secretHash = await hashClientSecret(clientSecret);
      const overlap = options.revokePrevious ? 0 : CLIENT_SECRET_OVERLAP_SECONDS;
      const rotated = await db.inTenant(client.tenantId, (tx) => replaceSecretHash(tx, client.clientId, secretHash, overlap));
      if (!rotated) throw new NotFoundError('identity-provider app');
      return { ...rotated, clientSecret };
    },

    /** For the built-in provider: a registered client of a live tenant, without its secret. */
    async providerClient(clientId: string): Promise<ProviderClient | null> {
      return (await db.system((tx) => findProviderClient(tx, clientId))) ?? null;
    },

    /** For the built-in provider: whether `secret` is the client's current secret, or its previous one within the overlap. */
    async verifySecret(clientId: string, secret: string): Promise<boolean> {
      for (const stored of await db.system((tx) => findSecretHashes(tx, clientId))) {
        if (await verifyClientSecret(secret, stored)) return true;
      }
      return false;
    },
  };
}
