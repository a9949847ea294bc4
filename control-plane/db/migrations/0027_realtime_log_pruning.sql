-- A tenant's event log keeps its last `retain` events. Each recorded change used to delete every
-- event at or below the window's start: an index scan from the log's oldest entry, which walks
-- every event deleted since the last vacuum, so each write of a tenant with a stream cost more
-- than the one before. The window moves by one event per change, so the change now deletes the
-- one event leaving it; a lowered `retain` deletes what falls outside the new window at once.
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
  delete from realtime_events where tenant_id = tenant and seq = next_seq - kept;
  -- One notification per tenant and transaction (PostgreSQL folds identical ones): readers fetch
  -- what is new from the log, under the tenant's row-level security.
  perform pg_notify('realtime_events', tenant::text);
  return null;
end $$;

create or replace function realtime_prune_to_retention() returns trigger
  language plpgsql
  security definer
  set search_path = public, pg_temp
  as $$
begin
  delete from realtime_events where tenant_id = new.tenant_id and seq <= new.last_seq - new.retain;
  return null;
end $$;

create trigger realtime_streams_retention
  after update of retain on realtime_streams
  for each row
  when (new.retain < old.retain)
  execute function realtime_prune_to_retention();
