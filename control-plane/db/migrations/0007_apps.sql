-- Apps (vertical enrollments): resources of the built-in type `tenant-vertical-enrollment` in the
-- company tenant, so that the resource routes list them; the apps service (v4 and the operator)
-- writes them. A key is unique within its company tenant.

insert into object_types (tenant_id, name, schema) values (null, 'tenant-vertical-enrollment', $json$
{
  "type": "object",
  "properties": {
    "key": { "type": "string", "maxLength": 63, "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$" },
    "name": { "type": "string", "minLength": 1, "maxLength": 200 },
    "template": { "type": "string", "maxLength": 100, "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$" },
    "source": { "type": "string", "maxLength": 63, "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$" },
    "appUrl": { "type": "string", "maxLength": 2048, "pattern": "^https?://[^/\\s]+" },
    "status": { "enum": ["pending", "active", "suspended", "retired"] },
    "childTenantId": { "type": "string", "format": "uuid" },
    "childTenantSlug": { "type": "string", "maxLength": 63 }
  },
  "required": ["key", "name", "source", "status"],
  "additionalProperties": false
}
$json$);

create unique index resources_app_key on resources (tenant_id, (data ->> 'key')) where type = 'tenant-vertical-enrollment';
