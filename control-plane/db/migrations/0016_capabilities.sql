-- A tenant's plan (null: the plan its starter template comes with), and the capabilities a
-- platform administrator allows or refuses one tenant against its plan. Tenant transactions read
-- their own overrides; only the platform writes them.
alter table tenants add column plan text check (plan in ('free', 'team', 'enterprise'));

create table capability_overrides (
  tenant_id uuid not null references tenants (id),
  capability text not null,
  allowed boolean not null,
  limits jsonb not null default '{}',
  reason text not null,
  set_by uuid references users (id),
  set_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, capability)
);
alter table capability_overrides enable row level security;
create policy tenant_rows on capability_overrides using (tenant_id = current_tenant_id());
grant select on capability_overrides to svc_app;
