-- Every change of a resource as a version: what the engine (resources/resource-ops.ts) wrote, by
-- whom and when, in the transaction of the change. Entries outlive their resource: a delete adds
-- one holding the last data. No foreign key to resources for that reason.
create table resource_versions (
  tenant_id uuid not null references tenants (id),
  resource_id uuid not null,
  type text not null,
  version integer not null,
  operation text not null check (operation in ('create', 'update', 'delete', 'action')),
  action text check ((operation = 'action') = (action is not null)),
  data jsonb not null,
  actor uuid,
  at timestamptz not null,
  -- Also the newest-first index of one resource's history (scanned backwards).
  primary key (tenant_id, resource_id, version)
);

alter table resource_versions enable row level security;
create policy tenant_rows on resource_versions using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
-- Append-only for tenants: history is never rewritten through the application role.
grant select, insert on resource_versions to svc_app;

-- Resources stored before history existed start theirs at their current version.
insert into resource_versions (tenant_id, resource_id, type, version, operation, data, actor, at)
select tenant_id, id, type, version, case when version = 1 then 'create' else 'update' end, data,
       coalesce(updated_by, created_by), updated_at
from resources;
