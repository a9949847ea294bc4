import {
  ClientIdSchema,
  EnsureIdpAppInputSchema,
  IdpAppWithSecretSchema,
  RotateClientSecretInputSchema,
  RotatedSecretSchema,
} from '../../../control-plane/contracts.ts';
import { param } from '../params.ts';
import { bodyAndQueryOptions, bodyWithPath } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** A rotation's option, in the body or the query string (`?revoke_previous=true`). */
const ROTATE_FLAGS = new Set(['revokePrevious']);
/** Renamed to snake_case; the former name stays accepted (field-aliases.ts). */
const ROTATE_ALIASES = { revoke_previous: 'revokePrevious' };

/**
 * v4 identity-provider apps: the OAuth client of an enrolled app, created (201, with its secret
 * this once) or confirmed (200, no secret); and a new secret for it (the old one working for an
 * hour more, or not at all with `revoke_previous`). `tenant_id` may be given in
 * the body or the query string.
 */
export const v4IdpAppRoutes = [
  defineRoute({
    method: 'POST',
    path: '/platform/provisioning/idp-apps',
    procedure: 'idpApps.ensure',
    tenant: 'query',
    input: {
      query: { tenant_id: param(EnsureIdpAppInputSchema.shape.tenant_id, { required: false, description: 'Tenant id or slug; may be given in the body instead' }) },
      body: { schema: EnsureIdpAppInputSchema.partial({ tenant_id: true }) },
    },
    output: {
      200: { description: 'The client existed; no secret', schema: IdpAppWithSecretSchema },
      201: { description: 'The client was created, with its secret (confidential clients) shown this once', schema: IdpAppWithSecretSchema },
    },
    docs: {
      operationId: 'ensureIdpApp',
      summary: "Create or confirm an app's OAuth client at the identity provider",
      tag: 'Identity-provider apps',
      description: "For an app enrolled in `tenant_id` (by `app_key`), for its tenant administrators and platform administrators. 201 creates the client and shows a confidential client's secret this once; 200 confirms it (its name and redirect URIs brought to the request, and its scopes when named), without a secret. `scopes` lists the tenant permissions the app's tokens may use (their user's permissions within these); omitted, a new app's tokens have their user's permissions. With an external provider the client is registered there through dynamic client registration (RFC 7591); a provider without it is 501.",
      errors: [409, 501, 502],
    },
    aliases: { app_key: 'appKey', display_name: 'displayName', redirect_uris: 'redirectUris', token_endpoint_auth_method: 'tokenEndpointAuthMethod' },
    sample: { body: { app_key: 'route-case', display_name: 'Route case', redirect_uris: ['https://route-case.example/callback'] } },
    handler: async ({ request, body, set, call, procedure }) => {
      const ensured = await procedure.mutation(call(), bodyAndQueryOptions(request, body));
      set.status = ensured.created ? 201 : 200;
      set.headers['cache-control'] = 'no-store';
      return ensured.app;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/provisioning/idp-apps/:clientId/rotate-secret',
    procedure: 'idpApps.rotateSecret',
    tenant: 'none',
    input: {
      path: { clientId: ClientIdSchema },
      query: { revoke_previous: param(RotateClientSecretInputSchema.shape.revokePrevious, { description: 'May be given in the body instead' }) },
      body: { schema: RotateClientSecretInputSchema.omit({ clientId: true }), required: false },
    },
    output: { 200: { description: 'The client with its new secret', schema: RotatedSecretSchema } },
    docs: {
      operationId: 'rotateIdpAppSecret',
      summary: "Rotate an app client's secret",
      tag: 'Identity-provider apps',
      description: 'The new secret is shown this once. The secret it replaces is still accepted at the token endpoint for an hour (until `previousSecretExpiresAt`), so that the app can be redeployed; `revoke_previous: true` (in the body, or `?revoke_previous=true`) stops it at once, for a leaked secret. An older secret stops at once. An external provider keeps its own secrets: 501.',
      errors: [409, 501],
    },
    aliases: ROTATE_ALIASES,
    sample: { params: { clientId: NIL_ID } },
    handler: async ({ request, params, body, set, call, procedure }) => {
      const options = bodyWithPath(bodyAndQueryOptions(request, body, ROTATE_FLAGS), { clientId: params.clientId });
      const rotated = await procedure.mutation(call(), options);
      set.headers['cache-control'] = 'no-store';
      return rotated;
    },
  }),
];
