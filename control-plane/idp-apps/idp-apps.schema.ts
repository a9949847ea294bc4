import { z } from 'zod';
import { PERMISSIONS } from '../auth/permissions.ts';
import { KEBAB_CASE, oneOf, TenantRefSchema } from '../tenants/tenants.schema.ts';

/** How a client authenticates at the token endpoint; `none` is a public client (PKCE alone, no secret). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** Which provider holds the client: the edge's built-in one, or the external OIDC provider configured instead. */
export const IDP_PROVIDERS = ['built-in', 'external'] as const;
export type IdpProvider = (typeof IDP_PROVIDERS)[number];

export const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a redirect URI cannot be registered; undefined when it can. */
function redirectUriIssue(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (/\s|\\/.test(value)) return 'must be written out in full, without spaces or backslashes';
  if (url.hash || value.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'may use http only on a loopback host (localhost, 127.0.0.1, [::1]); use https';
  return 'must be an https URL, or http on a loopback host';
}

const RedirectUriSchema = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((value, ctx) => {
    const issue = redirectUriIssue(value);
    if (issue) ctx.addIssue({ code: 'custom', message: issue });
  });

/** A client id in a path: ours are UUIDs, an external provider's any printable text. */
export const ClientIdSchema = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(255, 'must be at most 255 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/**
 * `POST /v4/platform/provisioning/idp-apps`: the client an app should have. `tenant_id` is the
 * tenant the app is enrolled in, `appKey` its key there.
 */
export const EnsureIdpAppInputSchema = z
  .object({
    tenant_id: TenantRefSchema,
    appKey: z
      .string({ error: 'is required' })
      .max(63, 'must be at most 63 characters')
      .regex(KEBAB_CASE, 'must be the kebab-case key of an app enrolled in the tenant'),
    displayName: z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    redirectUris: z
      .array(RedirectUriSchema, { error: 'is required' })
      .min(1, 'must list at least one redirect URI')
      .max(20, 'must list at most 20 redirect URIs')
      .transform((uris) => [...new Set(uris)]),
    tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS, { error: oneOf(TOKEN_ENDPOINT_AUTH_METHODS) }).default('client_secret_basic'),
    /**
     * The tenant permissions the app's tokens may use (its granted scopes): a token acts with its
     * user's permissions within these. Omitted: unchanged on an existing client; none on a new
     * one, whose tokens then have their user's permissions.
     */
    scopes: z
      .array(z.enum(PERMISSIONS, { error: oneOf(PERMISSIONS) }))
      .max(PERMISSIONS.length)
      .transform((scopes) => [...new Set(scopes)].sort())
      .optional(),
  })
  .strict();
export type EnsureIdpAppInput = z.infer<typeof EnsureIdpAppInputSchema>;

export const ClientRefSchema = z.object({ clientId: ClientIdSchema }).strict();

/** A rotation: `revokePrevious` stops the replaced secret at once (a leaked one) instead of after the overlap. */
export const RotateSecretInputSchema = ClientRefSchema.extend({ revokePrevious: z.boolean().optional() }).strict();

export const IdpAppSchema = z.object({
  clientId: z.string(),
  tenantId: z.string(),
  appKey: z.string(),
  displayName: z.string(),
  redirectUris: z.array(z.string()),
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  /** The tenant permissions the app's tokens may use; null: their user's permissions, unnarrowed. */
  scopes: z.array(z.string()).nullable(),
  provider: z.enum(IDP_PROVIDERS),
  /** The provider's issuer: where the app signs its users in. */
  issuer: z.string(),
  secretRotatedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type IdpApp = z.infer<typeof IdpAppSchema>;

/** The app's client, with its secret only when this call made one (creation of a confidential client). */
export const IdpAppWithSecretSchema = IdpAppSchema.extend({ clientSecret: z.string().optional() });

export const EnsuredIdpAppSchema = z.object({ created: z.boolean(), app: IdpAppWithSecretSchema });
export type EnsuredIdpApp = z.infer<typeof EnsuredIdpAppSchema>;

/** A rotation's answer: the new secret, shown this once, and until when the replaced one still works (null: it stopped). */
export const RotatedSecretSchema = IdpAppSchema.extend({ clientSecret: z.string(), previousSecretExpiresAt: z.string().nullable() });
export type RotatedSecret = z.infer<typeof RotatedSecretSchema>;

/** What the built-in provider needs of a registered client to accept it. */
export const ProviderClientSchema = z.object({
  clientId: z.string(),
  displayName: z.string(),
  redirectUris: z.array(z.string()),
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
});
export type ProviderClient = z.infer<typeof ProviderClientSchema>;

export const VerifySecretInputSchema = z.object({ clientId: ClientIdSchema, secret: z.string().max(1024) }).strict();
