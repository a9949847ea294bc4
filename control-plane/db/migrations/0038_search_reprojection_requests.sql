-- A built-in type whose search fields a migration changes keeps its resources' search projections
-- as they were: the projection is written by each resource write (and by a tenant's own change of
-- a type's searchFields, in that change's transaction), never by a migration. So the projects
-- written before 0035 gave `project` its search fields have none, and v4 search cannot find them.
-- `search_reprojection_requested_at` marks a built-in type whose resources' projections are to be
-- brought to its search fields; the platform does it at start-up, in the background, in every
-- tenant, and clears the mark when done (control-plane/resources/search-reprojection.ts). A later
-- migration that changes a built-in type's search_fields sets the mark again.
-- One process at a time does a request: it claims it until `search_reprojection_lease_until`, and
-- renews the claim after each page.
alter table object_types add column search_reprojection_requested_at timestamptz;
alter table object_types add column search_reprojection_lease_until timestamptz;

-- Only where there is something to project: a new database starts with no request.
update object_types t set search_reprojection_requested_at = now()
 where t.tenant_id is null and jsonb_array_length(t.search_fields) > 0
   and exists (select 1 from resources r where r.type = t.key);
