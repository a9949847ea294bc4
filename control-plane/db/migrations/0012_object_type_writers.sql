-- Types whose resources only another service writes, and what writes them: the resource routes
-- read them, but a write there would bypass that service's rules (an enrollment names the child
-- tenant that deleting the app soft-deletes). Null: the resource routes write it.
alter table object_types add column written_through text;
update object_types set written_through = 'the apps API or an App object'
  where tenant_id is null and name = 'tenant-vertical-enrollment';
