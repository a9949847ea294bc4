import postgres from 'postgres';
import { APP_ROLE } from './client.ts';

/** The login of tenant connections on a cluster the platform runs itself (development and tests). */
export const TENANT_LOGIN_ROLE = 'svc_tenant_login';

/**
 * Ensures the login role that tenant connections use on a private, trust-authenticated cluster:
 * a member of `svc_app` and of nothing else, so a tenant transaction cannot `SET ROLE` back to the
 * tables' owner, as it could if it logged in as the owner and only assumed `svc_app`. Run after the
 * migrations (which create `svc_app`). The owner is made a member of it, so that it may cancel the
 * statements of its connections (`cancellingOnAbort`). Returns `ownerUrl` with the user changed to
 * that role; it has no password, so it suits clusters that trust local connections only.
 */
export async function ensureTenantLogin(ownerUrl: string): Promise<string> {
  const sql = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  try {
    // Roles are shared by the cluster's databases: two processes may race to create it.
    await sql.unsafe(`
      do $$
      begin
        if not exists (select 1 from pg_roles where rolname = '${TENANT_LOGIN_ROLE}') then
          create role ${TENANT_LOGIN_ROLE} login nobypassrls in role ${APP_ROLE};
        end if;
      exception when duplicate_object or unique_violation then
        null;
      end $$`);
    await sql.unsafe(`grant ${TENANT_LOGIN_ROLE} to current_user`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(ownerUrl);
  url.username = TENANT_LOGIN_ROLE;
  url.password = '';
  return url.toString();
}
