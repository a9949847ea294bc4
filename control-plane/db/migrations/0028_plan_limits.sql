-- Limits that each tenant's plan sets, and the counts they are checked against.

-- Clients following an answer (a chat stream, or its resumption), per user and per message. A
-- follower renews its lease while it follows; a row whose lease ran out (a process that ended
-- midway) no longer counts.
create table chat_followers (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  user_id uuid not null references users (id) on delete cascade,
  message_id uuid not null references chat_messages (id) on delete cascade,
  lease_until timestamptz not null
);
create index chat_followers_user on chat_followers (tenant_id, user_id, lease_until);
create index chat_followers_message on chat_followers (message_id, lease_until);
create policy tenant_rows on chat_followers using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on chat_followers to svc_app;
select force_tenant_rls('chat_followers');

-- Bytes a tenant keeps in the blob store (documents, files, staged uploads, derived text): the
-- storage.blob capability's maxStoredBytes. Kept by every write and removal of a tenant's
-- object; documents stored before this table existed are counted from their recorded sizes.
create table tenant_storage_usage (
  tenant_id uuid primary key references tenants (id),
  bytes bigint not null default 0
);
create policy tenant_rows on tenant_storage_usage using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update on tenant_storage_usage to svc_app;
select force_tenant_rls('tenant_storage_usage');
insert into tenant_storage_usage (tenant_id, bytes)
  select tenant_id, sum(size) from documents group by tenant_id;

-- Running executions per tenant: the workflows.runtime capability's maxConcurrentExecutions.
create index executions_tenant_running on executions (tenant_id) where state = 'running';
