-- Views a domain publishes so that other domains read its rows without reading its table
-- (control-plane/db/table-owners.ts names the owners). Each is a plain projection of one table,
-- with the columns others may rely on; `security_invoker` makes the table's row-level security
-- (and its grants) apply to whoever reads the view, exactly as if they read the table.

-- tenants: the tenant tree, lifecycle and plan facts.
create view tenant_directory with (security_invoker = true) as
  select id, slug, name, status, status_reason, parent_id, home_region, starter_template, plan, created_at, deleted_at
  from tenants;

-- tenants: who belongs to which tenant, with which roles.
create view tenant_members with (security_invoker = true) as
  select tenant_id, user_id, roles, status, created_at
  from memberships;

-- identity: users' profiles (never their subjects).
create view user_directory with (security_invoker = true) as
  select id, email, name, avatar, status, preferences, platform_roles, created_at, last_login_at
  from users;

-- identity: each tenant's roles and the permissions they grant.
create view tenant_roles with (security_invoker = true) as
  select tenant_id, name, permissions
  from roles;

-- object-types: the types a tenant sees (its own and the built-in ones), with their version.
create view object_type_catalog with (security_invoker = true) as
  select id, tenant_id, key, name, status, version, schema, indexes
  from object_types;

-- resources: the rows of every type, as stored.
create view resource_rows with (security_invoker = true) as
  select id, tenant_id, type, data, version, created_at, updated_at
  from resources;

grant select on tenant_directory, tenant_members, user_directory, tenant_roles, object_type_catalog, resource_rows to svc_app;
