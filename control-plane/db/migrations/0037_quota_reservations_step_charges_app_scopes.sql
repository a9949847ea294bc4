-- Bytes an upload under way holds of its tenant's storage quota (storage.blob maxStoredBytes), so
-- that uploads running at the same moment cannot each take the same room. A row lives while its
-- upload streams; one left by a process that ended stops counting when it expires.
create table tenant_storage_reservations (
  id uuid primary key,
  tenant_id uuid not null references tenants (id),
  bytes bigint not null check (bytes >= 0),
  expires_at timestamptz not null
);
create index tenant_storage_reservations_tenant on tenant_storage_reservations (tenant_id, expires_at);
create policy tenant_rows on tenant_storage_reservations using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on tenant_storage_reservations to svc_app;
select force_tenant_rls('tenant_storage_reservations');

-- The orchestrate ai_chat steps whose chat message was counted against the day's ai.chat limit:
-- one row per execution and step, so a retried step is not counted again.
create table chat_step_charges (
  tenant_id uuid not null references tenants (id),
  execution_id uuid not null,
  step_id text not null,
  charged_at timestamptz not null default now(),
  primary key (tenant_id, execution_id, step_id)
);
create policy tenant_rows on chat_step_charges using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert on chat_step_charges to svc_app;
select force_tenant_rls('chat_step_charges');

-- The scopes (tenant permissions) an app's OAuth client was granted: its tokens act with the
-- user's permissions within these. Null: the user's permissions, as before scopes existed.
alter table idp_apps add column scopes text[];
