import type { Schemas } from '../api/wire.ts';

/** The tenant permissions an app's registration may grant its tokens (`scopes` of the idp-apps route). */
export const APP_SCOPES = [
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
] as const satisfies ReadonlyArray<NonNullable<Schemas['EnsureIdpAppRequest']['scopes']>[number]>;

export type AppScope = (typeof APP_SCOPES)[number];
