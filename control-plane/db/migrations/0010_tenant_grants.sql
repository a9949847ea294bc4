-- Tenant transactions read object types but never write them (the platform writes them as the
-- owner): svc_app keeps only what it uses.
revoke insert, update, delete on object_types from svc_app;
