-- Documents a tenant uploads, and the processing jobs (classification, indexing for retrieval)
-- that run on them as Temporal workflows. The file itself lives in the blob store, at
-- storage_path; extracted text and chunks live beside it and in the search index.
create table documents (
  id uuid primary key,
  tenant_id uuid not null references tenants (id),
  filename text not null,
  type text not null,
  content_type text not null,
  size bigint not null,
  sha256 text not null,
  storage_path text not null,
  status text not null check (status in ('uploaded', 'processing', 'ready', 'failed')),
  failure_reason text,
  indexed boolean not null default false,
  chunk_count integer not null default 0,
  pages integer,
  tags text[] not null default '{}',
  metadata jsonb not null default '{}',
  classification jsonb,
  uploaded_by uuid references users (id),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now())
);
create index documents_tenant_created on documents (tenant_id, created_at desc, id);
create index documents_tags on documents using gin (tags);

-- One row per processing request. At most one job of a document is open (queued or running)
-- at a time: the partial unique index refuses a second, so two requests cannot race.
create table document_jobs (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  document_id uuid not null references documents (id) on delete cascade,
  run_classify boolean not null,
  run_index boolean not null,
  chunk_size integer,
  chunk_overlap integer,
  state text not null check (state in ('queued', 'running', 'completed', 'failed', 'cancelled')),
  stage text,
  chunks integer,
  error text,
  requested_by uuid references users (id),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  started_at timestamptz,
  completed_at timestamptz
);
create unique index document_jobs_one_open on document_jobs (document_id) where state in ('queued', 'running');
create index document_jobs_document on document_jobs (tenant_id, document_id, created_at desc);

alter table documents enable row level security;
alter table document_jobs enable row level security;
create policy tenant_rows on documents using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on document_jobs using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on documents, document_jobs to svc_app;
