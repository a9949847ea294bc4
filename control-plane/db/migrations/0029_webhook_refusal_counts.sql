-- Refused webhook deliveries are counted per endpoint, hour and reason; only the newest of them
-- (a fixed number per endpoint) are kept as rows of webhook_deliveries. A flood of unsigned
-- deliveries then grows one counter instead of the deliveries table.
create table webhook_refusal_counts (
  tenant_id uuid not null references tenants (id),
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  window_start timestamptz not null,
  reason text not null,
  refused bigint not null,
  primary key (endpoint_id, window_start, reason)
);
create index webhook_refusal_counts_tenant on webhook_refusal_counts (tenant_id, endpoint_id, window_start desc);

-- The refused sample, newest first, for trimming it to its size.
create index webhook_deliveries_refused on webhook_deliveries (endpoint_id, received_at desc, id desc) where status = 'rejected';

create policy tenant_rows on webhook_refusal_counts using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
select force_tenant_rls('webhook_refusal_counts');
-- Tenants read their counts; only the platform's intake (the owner) writes them.
grant select on webhook_refusal_counts to svc_app;
