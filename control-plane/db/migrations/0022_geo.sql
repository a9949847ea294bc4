-- Geo: tenant datasets of GeoJSON features, isolated per tenant by row-level security.
-- No extension: a feature's bounding box is kept in plain float8 columns, and a btree on the
-- dataset and the box's southern edge serves box and radius queries. Under row-level security
-- PostgreSQL uses an operator as an index condition only when it is LEAKPROOF; float8 and uuid
-- comparisons are, the GiST operators of cube, earthdistance and PostGIS are not, so their indexes
-- would never serve a tenant's query (docs/decisions.md, Geo).

create table geo_datasets (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  key text not null check (key ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(key) <= 63),
  name text not null,
  description text,
  feature_count integer not null default 0,
  -- The extent of every feature, null while the dataset is empty.
  min_lon float8,
  min_lat float8,
  max_lon float8,
  max_lat float8,
  -- The largest latitude extent of one feature: how far south of a query's box a feature that
  -- reaches into it can start, which bounds the index range a box query scans.
  max_lat_span float8 not null default 0,
  created_by uuid references users (id),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  unique (tenant_id, key),
  unique (tenant_id, id)
);

create table geo_features (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  dataset_id uuid not null,
  -- The feature's GeoJSON id as text (a generated one when it had none) and whether it was a number.
  fid text not null,
  fid_is_number boolean not null default false,
  geometry_type text not null,
  geometry jsonb not null,
  properties jsonb,
  min_lon float8 not null check (min_lon between -180 and 180),
  min_lat float8 not null check (min_lat between -90 and 90),
  max_lon float8 not null check (max_lon between -180 and 180),
  max_lat float8 not null check (max_lat between -90 and 90),
  foreign key (tenant_id, dataset_id) references geo_datasets (tenant_id, id) on delete cascade,
  unique (dataset_id, fid)
);
create index geo_features_band on geo_features (dataset_id, min_lat, id);

alter table geo_datasets enable row level security;
alter table geo_features enable row level security;
create policy tenant_rows on geo_datasets using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on geo_features using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update, delete on geo_datasets, geo_features to svc_app;
