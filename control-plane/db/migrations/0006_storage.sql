-- Storage per tenant. Every backend lives in this database (the blob store aside) and isolates
-- tenants the platform's way: rows carry tenant_id and row-level security limits them to the
-- transaction's tenant. The `provisionStorage` workflow ensures a tenant's part of each backend and
-- records it in tenant_storage.

-- Routing and provisioning status per tenant and backend (no row: not provisioned).
create table tenant_storage (
  tenant_id uuid not null references tenants (id),
  backend text not null check (backend in ('postgresql', 'documentdb', 'blob', 'search')),
  status text not null check (status in ('provisioning', 'ready', 'failed')),
  location jsonb not null,
  error text,
  provisioned_at timestamptz,
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, backend)
);

-- Expression indexes on resources that a tenant's object types ask for (`x-indexed`). An index
-- serves every tenant whose type of that name declares the same field the same way, so each
-- tenant holds a claim; the index is dropped with its last claim.
create table tenant_storage_indexes (
  tenant_id uuid not null references tenants (id),
  index_name text not null,
  object_type text not null,
  field text not null,
  expression text not null,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, index_name)
);
create index tenant_storage_indexes_name on tenant_storage_indexes (index_name);

-- documentdb: a JSON document store (collections of documents with string ids).
create table docstore_collections (
  tenant_id uuid not null references tenants (id),
  name text not null check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,119}$'),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, name)
);

create table docstore_documents (
  tenant_id uuid not null,
  collection text not null,
  id text not null check (length(id) between 1 and 200),
  body jsonb not null,
  version integer not null default 1,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, collection, id),
  foreign key (tenant_id, collection) references docstore_collections (tenant_id, name) on delete cascade
);
create index docstore_documents_body on docstore_documents using gin (body jsonb_path_ops);

-- search: one projection row per searchable record, with a weighted full-text vector (the
-- language-neutral `simple` configuration) and an embedding filled by the indexer when one is set.
create table search_projections (
  tenant_id uuid not null references tenants (id),
  source_type text not null check (source_type in ('resource', 'document')),
  source_id uuid not null,
  object_type text not null,
  title text not null default '',
  body text not null default '',
  tsv tsvector generated always as (
    setweight(to_tsvector('simple'::regconfig, title), 'A') || setweight(to_tsvector('simple'::regconfig, body), 'B')
  ) stored,
  embedding real[],
  embedding_model text,
  source_version integer not null,
  source_updated_at timestamptz not null,
  projected_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, source_type, source_id)
);
create index search_projections_tsv on search_projections using gin (tsv);
create index search_projections_type on search_projections (tenant_id, object_type);

alter table tenant_storage enable row level security;
alter table tenant_storage_indexes enable row level security;
alter table docstore_collections enable row level security;
alter table docstore_documents enable row level security;
alter table search_projections enable row level security;

create policy tenant_rows on tenant_storage using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on tenant_storage_indexes using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on docstore_collections using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on docstore_documents using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on search_projections using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());

grant select, insert, update, delete on tenant_storage, tenant_storage_indexes, docstore_collections, docstore_documents, search_projections to svc_app;
