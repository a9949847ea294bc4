import { z } from 'zod';

function isIanaTimeZone(name: string): boolean {
  if (!/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A user's preferences: one record per user, seen in every tenant the user belongs to (v4 `me`, v3 users). */
export const PreferencesSchema = z.object({
  theme: z.string().max(50),
  language: z.string().max(35),
  timezone: z.string().max(100).refine(isIanaTimeZone, 'must be an IANA time zone name such as Europe/Berlin'),
  notifications: z.object({ email: z.boolean(), push: z.boolean() }),
});

/** A partial preferences object, merged deeply into the stored one. */
export const PreferencesPatchSchema = z
  .object({
    theme: PreferencesSchema.shape.theme,
    language: PreferencesSchema.shape.language,
    timezone: PreferencesSchema.shape.timezone,
    notifications: PreferencesSchema.shape.notifications.partial().strict(),
  })
  .partial()
  .strict();

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

/** The caller's own user record (v4 `GET /v4/identity/me`). */
export const MeSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  avatar: z.string().nullable(),
  status: z.string(),
  preferences: z.record(z.string(), z.unknown()),
  platformRoles: z.array(z.string()),
  createdAt: z.string(),
  lastLoginAt: z.string().nullable(),
});
export type Me = z.infer<typeof MeSchema>;

/** `PATCH /v4/identity/me/profile`: as v3's user update, for the caller only. */
export const UpdateProfileInputSchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
    preferences: PreferencesPatchSchema.optional(),
  })
  .strict();
export type UpdateProfileInput = z.infer<typeof UpdateProfileInputSchema>;

/** A change to a user's profile: a new name, preferences merged deeply into the stored ones. */
export type ProfileChanges = { name?: string; preferences?: z.infer<typeof PreferencesPatchSchema> };
