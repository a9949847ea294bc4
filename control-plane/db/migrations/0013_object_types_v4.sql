-- Object types as v4 manages them. `key` (kebab-case) names a type in paths and in resources.type;
-- `name` is its PascalCase name, which resolves too. Tenants write their own types (row-level
-- security keeps them to their own rows); built-in types (tenant_id null) stay the platform's.
alter table object_types rename column name to key;
alter table object_types add column name text;
update object_types set name = replace(initcap(replace(key, '-', ' ')), ' ', '');
alter table object_types
  alter column name set not null,
  add column status text not null default 'published' check (status in ('draft', 'published')),
  add column indexes jsonb not null default '[]',
  add column search_fields jsonb not null default '[]',
  add column actions jsonb not null default '{}',
  add column file_properties jsonb not null default '{}';
create unique index object_types_tenant_pascal_name on object_types (coalesce(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), lower(name));

-- Who last wrote a resource, beside who created it.
alter table resources add column updated_by uuid;
update resources set updated_by = created_by;

grant insert, update on object_types to svc_app;

-- Workflow configuration, product and AI settings: the records AI chat and workflow provisioning read.
insert into object_types (tenant_id, key, name, schema) values
(null, 'shared-workflow-config', 'SharedWorkflowConfig', $json$
{
  "type": "object",
  "properties": {
    "workflowKey": { "type": "string", "minLength": 1, "maxLength": 100, "pattern": "^[a-z0-9]+([-_:][a-z0-9]+)*$" },
    "displayName": { "type": "string", "maxLength": 200 },
    "vertical": { "type": "string", "maxLength": 100 },
    "usecase": { "type": "string", "maxLength": 63 },
    "scopeKey": { "type": "string", "maxLength": 200 },
    "status": { "enum": ["active", "draft"] },
    "stages": {
      "type": "array",
      "maxItems": 50,
      "items": {
        "type": "object",
        "properties": {
          "id": { "type": "string", "minLength": 1, "maxLength": 100 },
          "displayName": { "type": "string", "maxLength": 200 },
          "prompt": { "type": "string", "maxLength": 20000 },
          "envKey": { "type": "string", "maxLength": 100 }
        },
        "required": ["id"],
        "additionalProperties": false
      }
    },
    "env": { "type": "object", "additionalProperties": { "type": "string", "maxLength": 2000 } },
    "aiProfileKey": { "type": "string", "maxLength": 100 },
    "label": { "type": "string", "maxLength": 200 }
  },
  "required": ["workflowKey", "status"],
  "additionalProperties": false
}
$json$),
(null, 'vertical-product-config', 'VerticalProductConfig', $json$
{
  "type": "object",
  "properties": {
    "vertical": { "type": "string", "minLength": 1, "maxLength": 100 },
    "workflowKey": { "type": "string", "minLength": 1, "maxLength": 100 },
    "displayName": { "type": "string", "maxLength": 200 },
    "status": { "enum": ["active", "draft"] },
    "features": { "type": "array", "maxItems": 100, "items": { "type": "string", "maxLength": 100 } },
    "settings": { "type": "object" }
  },
  "required": ["vertical", "workflowKey", "status"],
  "additionalProperties": false
}
$json$),
(null, 'shared-ai-profile', 'SharedAiProfile', $json$
{
  "type": "object",
  "properties": {
    "profileKey": { "type": "string", "minLength": 1, "maxLength": 100 },
    "provider": { "type": "string", "minLength": 1, "maxLength": 100 },
    "model": { "type": "string", "maxLength": 200 },
    "temperature": { "type": "number", "minimum": 0, "maximum": 1 },
    "maxTokens": { "type": "integer", "minimum": 1, "maximum": 32000 },
    "systemPrompt": { "type": "string", "maxLength": 20000 }
  },
  "required": ["profileKey", "provider"],
  "additionalProperties": false
}
$json$),
(null, 'shared-chatbot-config', 'SharedChatbotConfig', $json$
{
  "type": "object",
  "properties": {
    "workflowKey": { "type": "string", "minLength": 1, "maxLength": 100 },
    "stage": { "type": "string", "maxLength": 100 },
    "aiProfileKey": { "type": "string", "maxLength": 100 },
    "greeting": { "type": "string", "maxLength": 2000 },
    "systemPrompt": { "type": "string", "maxLength": 20000 },
    "retrieval": {
      "type": "object",
      "properties": {
        "enabled": { "type": "boolean" },
        "types": { "type": "array", "maxItems": 50, "items": { "type": "string", "maxLength": 100 } },
        "limit": { "type": "integer", "minimum": 1, "maximum": 50 }
      },
      "additionalProperties": false
    },
    "status": { "enum": ["active", "draft"] }
  },
  "required": ["workflowKey", "status"],
  "additionalProperties": false
}
$json$);
