-- Work that must start once its transaction commits: a row written in the same transaction as the
-- document job, execution or accepted webhook delivery it starts, and removed once the workflow
-- engine has the run (its workflow id is deterministic, so a second start is a no-op). Every
-- process that serves the control plane or runs workers dispatches the rows of its task queue,
-- claiming them with SKIP LOCKED and a lease; a start that fails is tried again with backoff
-- (docs/decisions/0146-workflow-outbox.md).
create table workflow_outbox (
  id bigint generated always as identity primary key,
  tenant_id uuid not null references tenants (id) on delete cascade,
  task_queue text not null,
  workflow_type text not null,
  workflow_id text not null,
  workflow_key text not null,
  args jsonb not null,
  -- The id is reused by later work of the same thing (a document's index run): an open run may be
  -- an earlier one's, so the start waits for it to close instead of counting as done.
  reuses_id boolean not null default false,
  attempts integer not null default 0,
  -- When the row may be claimed next: now for a new row, the end of the lease while a process
  -- starts it, the backoff after a failed start.
  due_at timestamptz not null default now(),
  last_error text,
  created_at timestamptz not null default now()
);
create index workflow_outbox_due on workflow_outbox (task_queue, due_at);

create policy tenant_rows on workflow_outbox using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
select force_tenant_rls('workflow_outbox');
grant select, insert on workflow_outbox to svc_app;

-- The embedding backlog: a lease per chunk, so that two processes never embed the same rows, and
-- the reason a chunk the embedding model refused is parked (it is not tried again until its source
-- is written again) (docs/decisions/0147-fair-embedding-backlog.md).
alter table search_chunks add column embedding_lease_until timestamptz;
alter table search_chunks add column embedding_refused text;
drop index search_chunks_unembedded;
create index search_chunks_unembedded on search_chunks (tenant_id, id) where embedding_model is null and embedding_refused is null;

-- Periodic sweeps shared by every process: a sweep runs where it claims its row, at most once per
-- interval across all processes (docs/decisions/0148-scheduled-sweeps.md).
create table scheduled_sweeps (
  name text primary key,
  ran_at timestamptz not null
);

create index idempotency_keys_expired on idempotency_keys (expires_at);
