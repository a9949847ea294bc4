-- Which Kubernetes object declares a platform object (`tenant/<id>`, `app/<company tenant id>/<key>`): one
-- object each, so that a second Tenant or App naming the same tenant or app is refused instead of
-- sharing it, and deleting the second leaves the first one's tenant alone. Only the operator's
-- system connection reads and writes it (no grant to svc_app).

create table declarations (
  subject text primary key,
  object_kind text not null check (object_kind in ('Tenant', 'App')),
  object_name text not null,
  object_uid text not null,
  declared_at timestamptz not null default now()
);
