-- Every change of a tenant's lifecycle status (provisioning -> active or failed, soft delete) is
-- announced on the channel `tenant_status` with the tenant's slug, at commit, so that the operator
-- reflects it at once instead of polling.

create or replace function notify_tenant_status() returns trigger
  language plpgsql
  as $$
begin
  perform pg_notify('tenant_status', new.slug);
  return null;
end $$;

create trigger tenants_status_notify
  after update of status on tenants
  for each row
  when (old.status is distinct from new.status)
  execute function notify_tenant_status();
