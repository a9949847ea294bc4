-- The transaction of each change, so that a list's remembered exact total can tell whether a
-- change of its types has committed since it was counted (resources/list-totals.ts). Entries
-- written before this migration have none: they are older than any total counted after it.
alter table resource_versions add column xid xid8;
alter table resource_versions alter column xid set default pg_current_xact_id();
create index resource_versions_changes on resource_versions (tenant_id, type, xid);
