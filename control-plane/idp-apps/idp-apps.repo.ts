import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import type { IdpApp, IdpProvider, ProviderClient, TokenEndpointAuthMethod } from './idp-apps.schema.ts';

const APP_COLUMNS = `client_id as "clientId", tenant_id::text as "tenantId", app_key as "appKey", display_name as "displayName",
  redirect_uris as "redirectUris", token_endpoint_auth_method as "tokenEndpointAuthMethod", scopes, provider, issuer,
  ${isoTimestamp('secret_rotated_at')} as "secretRotatedAt", ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** Clients of live tenants only: a deleted tenant's clients are neither found nor accepted. */
const LIVE_TENANT = `exists (select 1 from tenant_directory t where t.id = idp_apps.tenant_id and t.deleted_at is null)`;

/** Serializes the ensures of one app's client at one issuer, until the transaction ends. */
export async function lockAppClient(tx: Tx, appKey: string, issuer: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`idp-app|${appKey}|${issuer}|`} || current_tenant_id()::text, 0))`;
}

/** The current tenant's client of an app at an issuer. */
export async function findAppClient(tx: Tx, appKey: string, issuer: string): Promise<IdpApp | undefined> {
  const rows = await tx.unsafe<IdpApp[]>(
    `select ${APP_COLUMNS} from idp_apps where tenant_id = current_tenant_id() and app_key = $1 and issuer = $2`,
    [appKey, issuer],
  );
  return rows[0];
}

/** How many clients the current tenant has at an issuer. */
export async function countClients(tx: Tx, issuer: string): Promise<number> {
  const [row] = await tx<{ count: number }[]>`select count(*)::int as count from idp_apps where tenant_id = current_tenant_id() and issuer = ${issuer}`;
  return row!.count;
}

export interface NewIdpApp {
  clientId: string;
  appKey: string;
  displayName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  scopes: string[] | null;
  provider: IdpProvider;
  issuer: string;
  secretHash: string | null;
  createdBy: string;
}

/** Inserts a client in the current tenant. */
export async function insertAppClient(tx: Tx, app: NewIdpApp): Promise<IdpApp> {
  const rows = await tx.unsafe<IdpApp[]>(
    `insert into idp_apps (client_id, tenant_id, app_key, display_name, redirect_uris, token_endpoint_auth_method, provider, issuer, secret_hash, secret_rotated_at, created_by, scopes, created_at, updated_at)
     values ($1, current_tenant_id(), $2, $3, $4::text[], $5, $6, $7, $8, case when $8::text is null then null else ${NOW_MS} end, $9::uuid, $10::text[], ${NOW_MS}, ${NOW_MS})
     returning ${APP_COLUMNS}`,
    [app.clientId, app.appKey, app.displayName, app.redirectUris, app.tokenEndpointAuthMethod, app.provider, app.issuer, app.secretHash, app.createdBy, app.scopes],
  );
  return rows[0]!;
}

/** Sets a client's name, redirect URIs and granted scopes in the current tenant. */
export async function updateAppClient(tx: Tx, clientId: string, changes: { displayName: string; redirectUris: string[]; scopes: string[] | null }): Promise<IdpApp> {
  const rows = await tx.unsafe<IdpApp[]>(
    `update idp_apps set display_name = $2, redirect_uris = $3::text[], scopes = $4::text[], updated_at = ${NOW_MS}
     where tenant_id = current_tenant_id() and client_id = $1 returning ${APP_COLUMNS}`,
    [clientId, changes.displayName, changes.redirectUris, changes.scopes],
  );
  return rows[0]!;
}

/**
 * Replaces a client's secret hash in the current tenant; the hash it replaces keeps being accepted
 * for `overlapSeconds` (0: it stops at once).
 */
export async function replaceSecretHash(
  tx: Tx,
  clientId: string,
  secretHash: string,
  overlapSeconds: number,
): Promise<(IdpApp & { previousSecretExpiresAt: string | null }) | undefined> {
  const rows = await tx.unsafe<(IdpApp & { previousSecretExpiresAt: string | null })[]>(
    `update idp_apps set secret_hash = $2, secret_rotated_at = ${NOW_MS}, updated_at = ${NOW_MS},
       previous_secret_hash = case when $3::int > 0 then secret_hash end,
       previous_secret_expires_at = case when $3::int > 0 and secret_hash is not null then ${NOW_MS} + make_interval(secs => $3::int) end
     where tenant_id = current_tenant_id() and client_id = $1
     returning ${APP_COLUMNS}, ${isoTimestamp('previous_secret_expires_at')} as "previousSecretExpiresAt"`,
    [clientId, secretHash, overlapSeconds],
  );
  return rows[0];
}

/** Platform work: a client of a live tenant by its id, whatever the tenant. */
export async function findClientById(tx: Tx, clientId: string): Promise<IdpApp | undefined> {
  const rows = await tx.unsafe<IdpApp[]>(`select ${APP_COLUMNS} from idp_apps where client_id = $1 and ${LIVE_TENANT}`, [clientId]);
  return rows[0];
}

/**
 * Platform work: the tenant that registered a client, live or deleted, and the scopes it was
 * granted (null: unnarrowed); undefined for a client no tenant registered.
 */
export async function findClientBinding(tx: Tx, clientId: string): Promise<{ tenantId: string; scopes: string[] | null } | undefined> {
  const rows = await tx<{ tenantId: string; scopes: string[] | null }[]>`select tenant_id::text as "tenantId", scopes from idp_apps where client_id = ${clientId} limit 1`;
  return rows[0];
}

/** Platform work: a built-in provider's client of a live tenant, as the provider needs it. */
export async function findProviderClient(tx: Tx, clientId: string): Promise<ProviderClient | undefined> {
  const rows = await tx.unsafe<ProviderClient[]>(
    `select client_id as "clientId", display_name as "displayName", redirect_uris as "redirectUris", token_endpoint_auth_method as "tokenEndpointAuthMethod"
     from idp_apps where client_id = $1 and provider = 'built-in' and ${LIVE_TENANT}`,
    [clientId],
  );
  return rows[0];
}

/**
 * Platform work: the secret hashes a built-in provider's confidential client of a live tenant is
 * accepted with: the current one, then the one a rotation replaced while its overlap lasts.
 */
export async function findSecretHashes(tx: Tx, clientId: string): Promise<string[]> {
  const rows = await tx<{ current: string; previous: string | null }[]>`
    select secret_hash as current, case when previous_secret_expires_at > now() then previous_secret_hash end as previous from idp_apps
    where client_id = ${clientId} and provider = 'built-in' and secret_hash is not null
      and exists (select 1 from tenant_directory t where t.id = idp_apps.tenant_id and t.deleted_at is null)`;
  return rows[0] ? [rows[0].current, ...(rows[0].previous ? [rows[0].previous] : [])] : [];
}

/** Platform work: what manages a client at its external provider (RFC 7592). */
export async function saveRegistration(tx: Tx, clientId: string, management: { registrationClientUri: string; registrationAccessToken: string }): Promise<void> {
  await tx`insert into idp_app_registrations (client_id, registration_client_uri, registration_access_token)
    values (${clientId}, ${management.registrationClientUri}, ${management.registrationAccessToken})
    on conflict (client_id) do update set registration_client_uri = excluded.registration_client_uri, registration_access_token = excluded.registration_access_token`;
}

export async function findRegistration(tx: Tx, clientId: string): Promise<{ registrationClientUri: string; registrationAccessToken: string } | undefined> {
  const rows = await tx<{ registrationClientUri: string; registrationAccessToken: string }[]>`
    select registration_client_uri as "registrationClientUri", registration_access_token as "registrationAccessToken"
    from idp_app_registrations where client_id = ${clientId}`;
  return rows[0];
}
