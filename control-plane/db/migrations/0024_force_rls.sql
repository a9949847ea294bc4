-- Row-level security is forced on every tenant table, so that it binds the tables' owner too
-- (a superuser still bypasses it; production owners are not superusers). The owner does the
-- platform's own work across tenants (identity, provisioning, migrations) with no tenant set: a
-- policy of its own lets it see every row then, and only the set tenant's rows when a tenant is
-- set, so that a tenant transaction that gets back to the owner (`RESET ROLE` on a connection that
-- logged in as the owner) still sees one tenant. A table added later calls force_tenant_rls('name').

create or replace function force_tenant_rls(p_table regclass) returns void
  language plpgsql
  set search_path = pg_catalog, public, pg_temp
as $$
declare
  owner_role name := (select pg_get_userbyid(c.relowner) from pg_class c where c.oid = p_table);
begin
  execute format('alter table %s enable row level security', p_table);
  execute format('alter table %s force row level security', p_table);
  if not exists (select 1 from pg_policy where polrelid = p_table and polname = 'platform_owner') then
    execute format(
      'create policy platform_owner on %s to %I using (public.current_tenant_id() is null) with check (public.current_tenant_id() is null)',
      p_table, owner_role);
  end if;
end $$;

revoke all on function force_tenant_rls(regclass) from public;

-- Every table with a tenant_id column, and every other table that already has row-level
-- security (tenants, users), found in the catalog.
select force_tenant_rls(c.oid::regclass)
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and c.relkind in ('r', 'p')
  and (c.relrowsecurity or exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped));

-- The one lookup across tenants that tenant transactions make: it clears the tenant for its own
-- reads (the owner sees every row only with none set) and sets it back before it returns.
create or replace function user_belongs_elsewhere(p_user uuid) returns boolean
  language plpgsql volatile security definer
  -- Only the platform's tables: no schema or temporary table of the caller's can stand in for them.
  set search_path = pg_catalog, public, pg_temp
as $$
declare
  here uuid := public.current_tenant_id();
  found boolean;
begin
  if here is null then
    return false;
  end if;
  perform set_config('svc.tenant_id', '', true);
  select exists (select 1 from public.memberships m where m.user_id = p_user and m.tenant_id = here)
     and exists (
       select 1 from public.memberships m join public.tenants t on t.id = m.tenant_id
       where m.user_id = p_user and m.tenant_id <> here and t.deleted_at is null)
    into found;
  perform set_config('svc.tenant_id', here::text, true);
  return found;
end $$;

revoke all on function user_belongs_elsewhere(uuid) from public;
grant execute on function user_belongs_elsewhere(uuid) to svc_app;
