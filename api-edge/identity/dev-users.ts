/** A user of the built-in development identity provider. Memberships and roles live in the database. */
export interface DevUser {
  /** Stable subject identifier (`sub` claim). */
  readonly sub: string;
  readonly email: string;
  readonly name: string;
  /** Tenant slug, issued as the `tid` claim; absent for a user who belongs to no tenant. */
  readonly tenant?: string;
  /** Issued as the `email_verified` claim. Default true. */
  readonly emailVerified?: boolean;
  /** Issued as the `picture` claim when set. */
  readonly picture?: string;
}

/** The seeded development users. Their `sub` values never change, so database fixtures can refer to them. */
export const DEV_USERS: readonly DevUser[] = Object.freeze([
  { sub: '4f1c2a8e-6b3d-4c5e-9a71-0d2e8b6f3a11', email: 'admin@acme.test', name: 'Acme Admin', tenant: 'acme' },
  { sub: '8a3e5d27-1f4b-4b9c-8e62-7c5d1a9b2e22', email: 'member@acme.test', name: 'Acme Member', tenant: 'acme' },
  { sub: 'c2b7f941-3d8a-4e15-b6c3-5a9e0f7d4c33', email: 'admin@globex.test', name: 'Globex Admin', tenant: 'globex' },
  { sub: '5d9e1b63-7a2c-4f08-9d14-3b6a8c2e5f44', email: 'platform@svc.test', name: 'Platform Admin' },
]);

/** Finds a user by e-mail address, ignoring case and surrounding whitespace. */
export function findDevUserByEmail(users: readonly DevUser[], email: string): DevUser | undefined {
  const wanted = email.trim().toLowerCase();
  return users.find((user) => user.email.toLowerCase() === wanted);
}
