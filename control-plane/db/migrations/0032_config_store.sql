-- The configuration store (v4 platform/config, `svc env pull|push`): per tenant, app (label) and
-- environment, key/value entries, some of them secrets. A secret's value is sealed by the control
-- plane with the operator's key (AES-256-GCM, `SECRETS_KEY`, bound to its tenant, label,
-- environment and key) before it is written: the database never holds the key or the plain text.
-- Every change is audited (who, when, which key and whether it is a secret; never the value), and
-- so is every read of secrets' values. The audit is append-only for tenant connections.

create table config_entries (
  tenant_id uuid not null references tenants (id),
  label text not null check (label ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  environment text not null check (environment ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  key text not null check (key ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
  secret boolean not null,
  -- The plain value of an entry that is not a secret; a secret's is in sealed_value only.
  value text,
  sealed_value text,
  version integer not null default 1,
  created_by uuid,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_by uuid,
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, label, environment, key),
  check (case when secret then value is null and sealed_value like 'sealed:%' else sealed_value is null and value is not null end)
);

create table config_audit (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  label text not null,
  environment text not null,
  -- Null for a read of the set's secrets.
  key text,
  action text not null check (action in ('created', 'updated', 'deleted', 'secrets_read')),
  secret boolean,
  actor_id uuid,
  actor_email text,
  at timestamptz not null default date_trunc('milliseconds', clock_timestamp())
);
create index config_audit_tenant_at on config_audit (tenant_id, at desc, id desc);

create policy tenant_rows on config_entries using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on config_audit using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
select force_tenant_rls('config_entries');
select force_tenant_rls('config_audit');
grant select, insert, update, delete on config_entries to svc_app;
grant select, insert on config_audit to svc_app;
