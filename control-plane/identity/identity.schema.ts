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

export { APP_TOKEN_ELSEWHERE, IdentitySchema, type Actor, type Identity, type Principal } from '../auth/caller.ts';

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
