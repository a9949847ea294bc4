-- Realtime: every change of a resource (created, updated, deleted, action) of a tenant that uses
-- realtime becomes an event in a bounded, tenant-scoped log, numbered 1, 2, 3... per tenant in
-- commit order, and is announced on the channel `realtime_events` with the tenant's id.
--
-- Webhooks: a tenant's inbound endpoints (source, secret, target workflow) and every delivery
-- they received, refused ones included.

-- One row per tenant whose changes are recorded (made by its first realtime negotiation).
-- `last_seq` is the number of its newest event; the log keeps its newest `retain` events.
create table realtime_streams (
  tenant_id uuid primary key references tenants (id),
  last_seq bigint not null default 0,
  retain integer not null default 10000 check (retain between 100 and 1000000),
  -- Events that connections missed because the log no longer held them when they resumed.
  dropped bigint not null default 0,
  last_dropped_at timestamptz,
  created_at timestamptz not null default date_trunc('milliseconds', now())
);

create table realtime_events (
  tenant_id uuid not null references tenants (id),
  seq bigint not null,
  kind text not null check (kind in ('created', 'updated', 'deleted', 'action')),
  resource_type text not null,
  resource_id uuid not null,
  version integer not null,
  action text,
  at timestamptz not null default date_trunc('milliseconds', clock_timestamp()),
  primary key (tenant_id, seq)
);

-- What each control-plane instance delivers per tenant, reported every few seconds while it has
-- connections of the tenant: `GET /v4/realtime/alerts` sums the fresh rows. Unlogged: diagnostics
-- need no crash safety.
create unlogged table realtime_deliveries (
  instance_id text not null,
  tenant_id uuid not null references tenants (id),
  connections integer not null,
  catching_up integer not null default 0,
  read_seq bigint not null,
  queued integer not null default 0,
  lag_ms integer not null default 0,
  listening boolean not null,
  reported_at timestamptz not null default now(),
  primary key (instance_id, tenant_id)
);

-- The key that signs realtime connection tokens, shared by every instance; made on first use.
create table realtime_signing_keys (
  id smallint primary key check (id = 1),
  secret bytea not null check (length(secret) >= 32),
  created_at timestamptz not null default now()
);

alter table realtime_streams enable row level security;
alter table realtime_events enable row level security;
alter table realtime_deliveries enable row level security;
alter table realtime_signing_keys enable row level security;
create policy tenant_rows on realtime_streams using (tenant_id = current_tenant_id());
create policy tenant_rows on realtime_events using (tenant_id = current_tenant_id());
create policy tenant_rows on realtime_deliveries using (tenant_id = current_tenant_id());
-- Tenants read their own log and diagnostics; only the owner (the trigger, the control plane's
-- platform work) writes them. The signing key is the owner's alone.
grant select on realtime_streams, realtime_events, realtime_deliveries to svc_app;

-- Records one change of a row of `resources` as an event of its tenant, at commit (a deferred
-- constraint trigger): by then the change's history entry (resource_versions) says whether an
-- update was an action, and taking the tenant's stream row there numbers the tenant's events in
-- commit order, so that a reader that has seen event n has seen every event before it. The owner
-- runs it (security definer): tenants cannot write the log themselves.
create or replace function realtime_record_resource_change() returns trigger
  language plpgsql
  security definer
  set search_path = public, pg_temp
  as $$
declare
  tenant uuid;
  event_kind text;
  event_action text;
  event_version integer;
  event_type text;
  event_resource uuid;
  next_seq bigint;
  kept integer;
begin
  tenant := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
  if tg_op = 'UPDATE' and old.version = new.version and old.data = new.data then
    return null;
  end if;
  -- A tenant that never negotiated has no stream: nothing more to do (one index probe).
  update realtime_streams set last_seq = last_seq + 1 where tenant_id = tenant returning last_seq, retain into next_seq, kept;
  if not found then
    return null;
  end if;
  if tg_op = 'DELETE' then
    event_kind := 'deleted';
    event_type := old.type;
    event_resource := old.id;
    event_version := old.version + 1;
  else
    event_type := new.type;
    event_resource := new.id;
    event_version := new.version;
    if tg_op = 'INSERT' then
      event_kind := 'created';
    else
      select case when v.operation = 'action' then 'action' else 'updated' end, v.action
        into event_kind, event_action
        from resource_versions v
        where v.tenant_id = tenant and v.resource_id = event_resource and v.version = event_version;
      event_kind := coalesce(event_kind, 'updated');
    end if;
  end if;
  insert into realtime_events (tenant_id, seq, kind, resource_type, resource_id, version, action)
  values (tenant, next_seq, event_kind, event_type, event_resource, event_version, event_action);
  delete from realtime_events where tenant_id = tenant and seq <= next_seq - kept;
  -- One notification per tenant and transaction (PostgreSQL folds identical ones): readers fetch
  -- what is new from the log, under the tenant's row-level security.
  perform pg_notify('realtime_events', tenant::text);
  return null;
end $$;

create constraint trigger resources_realtime_events
  after insert or update or delete on resources
  deferrable initially deferred
  for each row
  execute function realtime_record_resource_change();

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  source text not null check (source ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(source) <= 63),
  description text not null default '',
  workflow_id text not null,
  -- HMAC needs the secret itself: it is never returned after it is made, and svc_app cannot read it.
  secret text not null,
  secret_hint text not null,
  tolerance_seconds integer not null default 300 check (tolerance_seconds between 30 and 3600),
  max_body_bytes integer not null default 1048576 check (max_body_bytes between 1024 and 1048576),
  enabled boolean not null default true,
  created_by uuid,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  secret_rotated_at timestamptz not null default date_trunc('milliseconds', now()),
  unique (tenant_id, source)
);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  source text not null,
  -- accepted: verified and its workflow started; failed: verified and stored, but its workflow
  -- could not start (replayable); rejected: refused, with `reason`, and no payload kept.
  status text not null check (status in ('accepted', 'failed', 'rejected')),
  reason text,
  message text,
  external_id text,
  signature text,
  signed_at timestamptz,
  size_bytes bigint not null,
  content_type text,
  user_agent text,
  payload jsonb,
  execution_id uuid,
  replay_of uuid references webhook_deliveries (id) on delete set null,
  replayed_by uuid,
  received_at timestamptz not null default date_trunc('milliseconds', clock_timestamp()),
  check ((status = 'rejected') = (payload is null))
);
-- Replay protection: a verified delivery's signature, and its sender's delivery id, are taken once per endpoint.
create unique index webhook_deliveries_signature on webhook_deliveries (endpoint_id, signature) where status <> 'rejected' and replay_of is null;
create unique index webhook_deliveries_external_id on webhook_deliveries (endpoint_id, external_id)
  where status <> 'rejected' and replay_of is null and external_id is not null;
create index webhook_deliveries_endpoint_received on webhook_deliveries (tenant_id, endpoint_id, received_at desc, id);

alter table webhook_endpoints enable row level security;
alter table webhook_deliveries enable row level security;
create policy tenant_rows on webhook_endpoints using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on webhook_deliveries using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select (id, tenant_id, source, description, workflow_id, secret_hint, tolerance_seconds, max_body_bytes, enabled, created_by, created_at, updated_at, secret_rotated_at)
  on webhook_endpoints to svc_app;
grant insert, update, delete on webhook_endpoints to svc_app;
grant select, insert, update, delete on webhook_deliveries to svc_app;
