-- Idempotency keys of v4 writes, per tenant and caller: the first successful answer to a request
-- under a key, replayed to a retry with the same request; kept 24 hours (expired rows are ignored
-- and removed opportunistically by later requests of the tenant).
create table idempotency_keys (
  tenant_id uuid not null references tenants (id),
  actor text not null,
  key text not null,
  -- sha256 of the operation and its input, without the key.
  fingerprint text not null,
  -- Null only inside the transaction that claims the key and does the work.
  response jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (tenant_id, actor, key)
);
create index idempotency_keys_expiry on idempotency_keys (tenant_id, expires_at);

alter table idempotency_keys enable row level security;
create policy tenant_rows on idempotency_keys using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on idempotency_keys to svc_app;
