import type { ApiClient } from './api-client.ts';
import type { AppScope } from './idp-apps.constants.ts';

/** An app's OAuth client at the platform's identity provider, as the platform answers it. */
export interface IdpApp {
  clientId: string;
  tenantId: string;
  appKey: string;
  displayName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: string;
  provider: string;
  /** The tenant permissions its tokens may use (within their user's); null: their user's. */
  scopes: string[] | null;
  /** Where the app signs its users in. */
  issuer: string;
  secretRotatedAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Only when this call made it (a new confidential client, or a rotation): shown once. */
  clientSecret?: string;
}

export interface EnsureIdpApp {
  tenantId: string;
  appKey: string;
  displayName: string;
  redirectUris: string[];
  /** The tenant permissions the app's tokens may use; omitted, a new app's tokens have their user's, an existing app's stay. */
  scopes?: AppScope[];
}

const IDP_APPS = '/v4/platform/provisioning/idp-apps';

/** Identity-provider registrations of apps over v4: create or confirm one, rotate its secret. */
export function createIdpAppsService(api: ApiClient) {
  return {
    /** Creates the app's client (`created`, with its secret) or confirms the one it has, bringing its name and redirect URIs to these. */
    async ensure(input: EnsureIdpApp): Promise<{ created: boolean; app: IdpApp }> {
      const body = { tenant_id: input.tenantId, app_key: input.appKey, display_name: input.displayName, redirect_uris: input.redirectUris, ...(input.scopes ? { scopes: input.scopes } : {}) };
      const answer = await api.request<IdpApp>('POST', IDP_APPS, { body, subject: `App ${input.appKey} in tenant ${input.tenantId}` });
      return { created: answer.status === 201, app: answer.body };
    },

    /** A new secret for the client; the replaced one keeps working for the platform's overlap (an hour). */
    async rotateSecret(clientId: string): Promise<IdpApp & { clientSecret: string; previousSecretExpiresAt: string | null }> {
      const path = `${IDP_APPS}/${encodeURIComponent(clientId)}/rotate-secret`;
      return (await api.request<IdpApp & { clientSecret: string; previousSecretExpiresAt: string | null }>('POST', path, { subject: `Identity-provider app ${clientId}` })).body;
    },
  };
}
