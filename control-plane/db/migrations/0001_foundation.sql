-- Foundation: tenants, identity, object types and resources, isolated per tenant by row-level security.
-- Every tenant-scoped transaction runs as svc_app with svc.tenant_id set (see db/client.ts).

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'svc_app') then
    create role svc_app nologin nobypassrls;
  end if;
end $$;

do $$
begin
  execute format('grant svc_app to %I', current_user);
exception when others then
  null; -- already a member, or a superuser that needs no grant
end $$;

create or replace function current_tenant_id() returns uuid
  language sql stable
  as $$ select nullif(current_setting('svc.tenant_id', true), '')::uuid $$;

-- Casts text to timestamptz, or null when the text is not a timestamp; used to compare dates as dates.
create or replace function try_timestamptz(value text) returns timestamptz
  language plpgsql stable
  as $$
begin
  return value::timestamptz;
exception when others then
  return null;
end $$;

create table tenants (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  name text not null,
  status text not null default 'active',
  status_reason text,
  parent_id uuid references tenants (id),
  domains text[] not null default '{}',
  usecase text not null default 'generic',
  industry text,
  starter_template text not null default 'blank-vertical-template',
  home_region text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);

create table users (
  id uuid primary key default gen_random_uuid(),
  subject text unique,
  email text not null,
  name text not null default '',
  avatar text,
  status text not null default 'active' check (status in ('active', 'inactive')),
  preferences jsonb not null default '{"theme":"system","language":"en","timezone":"UTC","notifications":{"email":true,"push":false}}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_login_at timestamptz
);
create unique index users_email_key on users (lower(email));

create table roles (
  tenant_id uuid not null references tenants (id),
  name text not null,
  permissions text[] not null,
  primary key (tenant_id, name)
);

create table memberships (
  tenant_id uuid not null references tenants (id),
  user_id uuid not null references users (id),
  roles text[] not null,
  status text not null default 'active',
  created_at timestamptz not null default now(),
  primary key (tenant_id, user_id)
);
create index memberships_user on memberships (user_id);

-- tenant_id null marks a built-in type that every tenant has.
create table object_types (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid references tenants (id),
  name text not null,
  schema jsonb not null,
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index object_types_tenant_name on object_types (coalesce(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), name);

create table resources (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  type text not null,
  data jsonb not null,
  version integer not null default 1,
  created_by uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index resources_tenant_type_created on resources (tenant_id, type, created_at, id);

-- Request counters of the edge's rate limits (rate-limiter-flexible's PostgreSQL layout), shared by
-- every edge instance. Unlogged: counters need no crash safety.
create unlogged table rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);

alter table tenants enable row level security;
alter table users enable row level security;
alter table roles enable row level security;
alter table memberships enable row level security;
alter table object_types enable row level security;
alter table resources enable row level security;

create policy tenant_self on tenants using (id = current_tenant_id());
create policy tenant_members on users
  using (exists (select 1 from memberships m where m.user_id = users.id and m.tenant_id = current_tenant_id()));
create policy tenant_rows on roles using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on memberships using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_or_builtin on object_types for select using (tenant_id = current_tenant_id() or tenant_id is null);
create policy tenant_writes on object_types for all using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on resources using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());

grant usage on schema public to svc_app;
grant select on tenants to svc_app;
grant select, update on users to svc_app;
grant select on roles, memberships to svc_app;
grant select, insert, update, delete on object_types, resources to svc_app;
grant execute on function current_tenant_id(), try_timestamptz(text) to svc_app;

insert into object_types (tenant_id, name, schema) values (null, 'project', $json$
{
  "type": "object",
  "properties": {
    "name": { "type": "string", "minLength": 1, "maxLength": 500 },
    "status": { "type": "string", "maxLength": 100 },
    "budget": { "type": "number", "exclusiveMinimum": 0, "errorMessage": "must be a positive number" },
    "startDate": { "type": "string", "format": "date" },
    "completedAt": { "type": "string", "format": "date-time" },
    "owner": { "type": "string", "maxLength": 200 },
    "metadata": { "type": "object" }
  },
  "required": ["name"],
  "additionalProperties": false
}
$json$);
