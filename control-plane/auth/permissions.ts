/** Every permission a role can grant. v3 names them on the user record. */
export const PERMISSIONS = [
  'resources.read',
  'resources.create',
  'resources.update',
  'resources.delete',
  'documents.read',
  'documents.upload',
  'chat.access',
  'orchestrate.read',
  'orchestrate.execute',
  'users.read',
  'users.manage',
  'tenants.manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Roles every tenant starts with. `tenant-admin` is the v4 administrator role. */
export const DEFAULT_ROLES: Record<string, readonly Permission[]> = {
  admin: PERMISSIONS.filter((p) => p !== 'tenants.manage'),
  member: PERMISSIONS.filter((p) => p !== 'users.manage' && p !== 'tenants.manage'),
  'tenant-admin': PERMISSIONS,
};

/**
 * Platform-wide permissions, above every tenant. They come from platform roles held on the user
 * (`users.platform_roles`), never from a tenant membership, so no tenant admin can grant them.
 */
export const PLATFORM_PERMISSIONS = ['platform.tenants.create-root', 'platform.tenants.manage', 'platform.users.read'] as const;
export type PlatformPermission = (typeof PLATFORM_PERMISSIONS)[number];

export const PLATFORM_ROLES: Record<string, readonly PlatformPermission[]> = {
  'platform-admin': PLATFORM_PERMISSIONS,
};

/** The union of the permissions that `roles` grant; unknown role names grant nothing. */
export function platformPermissionsOf(roles: readonly string[]): Set<PlatformPermission> {
  return new Set(roles.flatMap((role) => PLATFORM_ROLES[role] ?? []));
}
