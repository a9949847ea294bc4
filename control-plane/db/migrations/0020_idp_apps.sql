-- OAuth clients that apps register with the identity provider (v4 provisioning/idp-apps). One
-- client per app and issuer in a tenant. A client secret is kept only as its scrypt hash, and only
-- for the built-in provider, which asks the platform to check it; an external provider keeps its
-- own. Tenant transactions read and write their own tenant's clients; the built-in provider looks
-- a client up by its id across tenants through the platform's own connection.

create table idp_apps (
  client_id text primary key,
  tenant_id uuid not null references tenants (id),
  app_key text not null,
  display_name text not null,
  redirect_uris text[] not null,
  token_endpoint_auth_method text not null check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'none')),
  provider text not null check (provider in ('built-in', 'external')),
  issuer text not null,
  secret_hash text,
  secret_rotated_at timestamptz,
  created_by uuid references users (id),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  unique (tenant_id, app_key, issuer)
);
alter table idp_apps enable row level security;
create policy tenant_rows on idp_apps using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update on idp_apps to svc_app;

-- What manages a client at an external provider (RFC 7592): its registration URI and access
-- token, which the platform must send back as it got them. Only the platform's connection reads
-- them (no grant to svc_app).
create table idp_app_registrations (
  client_id text primary key references idp_apps (client_id) on delete cascade,
  registration_client_uri text not null,
  registration_access_token text not null
);
