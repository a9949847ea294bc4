-- Workflow definitions (per tenant, typed steps) and their executions, which run on Temporal as
-- workflow `exec-<id>`; activities keep these rows current, so the API lists and filters them here.

create table workflow_definitions (
  tenant_id uuid not null references tenants (id),
  id text not null check (id ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  name text not null,
  description text not null default '',
  version text not null default '1',
  steps jsonb not null,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, id)
);

create table executions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  workflow_id text not null,
  workflow_version text not null,
  state text not null check (state in ('running', 'completed', 'failed', 'cancelled', 'timed_out')),
  input jsonb not null default '{}',
  output jsonb,
  error jsonb,
  metadata jsonb not null default '{}',
  steps jsonb not null,
  created_by uuid,
  started_at timestamptz not null default date_trunc('milliseconds', now()),
  completed_at timestamptz
);
create index executions_tenant_started on executions (tenant_id, started_at desc, id);
create index executions_tenant_workflow on executions (tenant_id, workflow_id, started_at desc);

alter table workflow_definitions enable row level security;
alter table executions enable row level security;
create policy tenant_rows on workflow_definitions using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on executions using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on workflow_definitions, executions to svc_app;
