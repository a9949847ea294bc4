import { z } from 'zod';

/** What a verified bearer token says about its holder; the edge (or the HTTP server) verifies it. */
export const IdentitySchema = z.object({
  sub: z.string().min(1),
  email: z.string().optional(),
  /** The token's `email_verified` claim, when it carries one. */
  emailVerified: z.boolean().optional(),
  name: z.string().optional(),
  /** The token's `picture` claim (an image address), kept as the user's `avatar`. */
  picture: z.string().max(2048).optional(),
  /** Tenant id or slug from the token's tenant claim, when the provider sets one. */
  tenant: z.string().optional(),
  /** The client the token was issued to (`client_id` or `azp`), when it names one. */
  clientId: z.string().optional(),
  /** The values of the token's `scope` claim, when it carries one; those naming permissions narrow what it may do. */
  scopes: z.array(z.string()).optional(),
  issuedAt: z.number().optional(),
});
export type Identity = z.infer<typeof IdentitySchema>;

/** Why a token issued to an app that a tenant registered is refused outside that tenant. */
export const APP_TOKEN_ELSEWHERE = 'this token was issued to an app, which acts only in the tenant that registered it';

/** The caller of a tenant-scoped procedure: a user acting in one tenant with that tenant's permissions. */
export interface Actor {
  userId: string;
  email: string;
  tenantId: string;
  tenantSlug: string;
  roles: string[];
  permissions: ReadonlySet<string>;
}

/** The caller of a procedure that names no tenant (identity and platform routes). */
export interface Principal {
  userId: string;
  email: string;
  /** The token's e-mail address when the token says it is verified; what self-provisioning trusts. */
  verifiedEmail?: string;
  platformRoles: string[];
  platformPermissions: ReadonlySet<string>;
  /** Set when the token was issued to an app a tenant registered: the only tenant it acts in. */
  appTenantId?: string;
}
