-- Built-in types declare the fields their lists filter and sort on, and the project's search fields.
-- Their indexes are shared by every tenant (tenant_id first, partial on the type), built here once;
-- a tenant's own types get indexes partial on the tenant, built when the type declares them.
-- Each statement below is the one control-plane/storage/builtin-indexes.ts makes (a test checks).

update object_types set
  schema = jsonb_set(schema, '{properties,description}', '{"type": "string", "maxLength": 10000}'),
  indexes = '["status", "budget", "name"]',
  search_fields = '["name", "description"]',
  version = version + 1,
  updated_at = now()
where tenant_id is null and key = 'project';
update object_types set indexes = '["workflowKey"]', version = version + 1, updated_at = now() where tenant_id is null and key in ('shared-workflow-config', 'shared-chatbot-config');
update object_types set indexes = '["vertical", "workflowKey"]', version = version + 1, updated_at = now() where tenant_id is null and key = 'vertical-product-config';
update object_types set indexes = '["profileKey"]', version = version + 1, updated_at = now() where tenant_id is null and key = 'shared-ai-profile';

create index if not exists resources_b_project_status on resources (tenant_id, (data #>> '{status}'), id) where type = 'project';
create statistics if not exists resources_bs_99e9471a2ac3e9d1 on ((data #>> '{status}')) from resources;
create index if not exists resources_b_project_budget on resources (tenant_id, (case when jsonb_typeof(data #> '{budget}') = 'number' then (data #>> '{budget}')::numeric end), id) where type = 'project';
create statistics if not exists resources_bs_5b5ccdb2bd8a0af3 on ((case when jsonb_typeof(data #> '{budget}') = 'number' then (data #>> '{budget}')::numeric end)) from resources;
create index if not exists resources_b_project_name on resources (tenant_id, (data #>> '{name}'), id) where type = 'project';
create statistics if not exists resources_bs_3a1845f907d3ced6 on ((data #>> '{name}')) from resources;
create index if not exists resources_b_shared_workflow_config_workflowkey on resources (tenant_id, (data #>> '{workflowKey}'), id) where type = 'shared-workflow-config';
create statistics if not exists resources_bs_90a1d8c4586cd069 on ((data #>> '{workflowKey}')) from resources;
create index if not exists resources_b_vertical_product_config_vertical on resources (tenant_id, (data #>> '{vertical}'), id) where type = 'vertical-product-config';
create statistics if not exists resources_bs_51de63b1b02029f0 on ((data #>> '{vertical}')) from resources;
create index if not exists resources_b_vertical_product_config_workflowkey on resources (tenant_id, (data #>> '{workflowKey}'), id) where type = 'vertical-product-config';
create index if not exists resources_b_shared_ai_profile_profilekey on resources (tenant_id, (data #>> '{profileKey}'), id) where type = 'shared-ai-profile';
create statistics if not exists resources_bs_0a045bbb97b5c1fc on ((data #>> '{profileKey}')) from resources;
create index if not exists resources_b_shared_chatbot_config_workflowkey on resources (tenant_id, (data #>> '{workflowKey}'), id) where type = 'shared-chatbot-config';

-- Date and date-time fields compare through try_timestamptz, which becomes IMMUTABLE so that they
-- can be indexed: it reads only ISO 8601 text (never 'now' or 'today'), a value without an offset
-- as UTC, whatever the session's TimeZone and DateStyle.
create or replace function try_timestamptz(value text) returns timestamptz
  language plpgsql immutable parallel safe
  set timezone to 'UTC' set datestyle to 'ISO, YMD'
  as $$
begin
  if value !~ '^\d{4}-\d{2}-\d{2}([T ][0-9:.]+)?(Z|[+-]\d{2}(:?\d{2})?)?$' then
    return null;
  end if;
  return value::timestamptz;
exception when others then
  return null;
end $$;

-- Under row-level security a filter is an index condition only when its functions are LEAKPROOF.
-- jsonb_extract_path_text (`#>>`, every text field's accessor) raises no error and has no side
-- effect, but is not marked so; only a superuser may mark it. Where the migrations run as one, they
-- do; elsewhere the storage doctor says how (text filters then use their indexes for sorts only).
do $$
begin
  if (select rolsuper from pg_roles where rolname = current_user) then
    alter function pg_catalog.jsonb_extract_path_text(jsonb, text[]) leakproof;
  end if;
end $$;

analyze resources;
