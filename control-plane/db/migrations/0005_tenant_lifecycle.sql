-- Tenant lifecycle: tenants are created `provisioning`, become `active` (or `failed`, with the reason
-- in status_reason) through the provisioning workflow, and are soft-deleted (`deleted`, deleted_at
-- set; rows stay). Platform roles (above every tenant) live on the user.

alter table tenants
  add constraint tenants_status_check check (status in ('provisioning', 'active', 'failed', 'deleted')),
  add constraint tenants_usecase_check check (usecase in ('council', 'retail', 'healthcare', 'finance', 'manufacturing', 'generic')),
  add constraint tenants_home_region_check check (home_region in ('au', 'ca', 'eu'));
create index tenants_parent on tenants (parent_id) where deleted_at is null;

alter table users
  add column platform_roles text[] not null default '{}' check (platform_roles <@ array['platform-admin']::text[]);

-- Tenant-scoped code may change a profile, never platform roles, subjects or e-mail addresses.
revoke update on users from svc_app;
grant update (name, preferences, updated_at) on users to svc_app;
