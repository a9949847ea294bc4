-- Whether a member of the current tenant also belongs to another tenant that is not deleted
-- (whatever the membership's status). A tenant transaction cannot see other tenants'
-- memberships; this answers only yes or no, and only for a member of the current tenant, so that
-- a profile change can check it in the transaction that holds the user's row (users.service.ts).
create or replace function user_belongs_elsewhere(p_user uuid) returns boolean
  language sql stable security definer
  -- Only the platform's tables: no schema or temporary table of the caller's can stand in for them.
  set search_path = pg_catalog, public, pg_temp
  as $$
    select exists (select 1 from public.memberships here where here.user_id = p_user and here.tenant_id = public.current_tenant_id())
      and exists (
        select 1 from public.memberships m join public.tenants t on t.id = m.tenant_id
        where m.user_id = p_user and m.tenant_id <> public.current_tenant_id() and t.deleted_at is null)
  $$;

revoke all on function user_belongs_elsewhere(uuid) from public;
grant execute on function user_belongs_elsewhere(uuid) to svc_app;
