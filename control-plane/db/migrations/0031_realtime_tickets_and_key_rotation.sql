-- Realtime connection tokens become one-time tickets, and the key that signs them rotates.
--
-- Signing keys: one row per key, numbered 1, 2, 3... (the number is the token's `kid`). The newest
-- key without `retires_at` signs; a key replaced by a newer one gets `retires_at` (the overlap after
-- the rotation, or at once when rotated because of a leak) and verifies tokens until then. Keys
-- retired a day ago are deleted. Only the owner reads the table (no grant to svc_app).
alter table realtime_signing_keys drop constraint realtime_signing_keys_id_check;
alter table realtime_signing_keys alter column id type integer;
alter table realtime_signing_keys add constraint realtime_signing_keys_id_check check (id > 0);
alter table realtime_signing_keys add column retires_at timestamptz;

-- Tickets that opened a connection, by the token's `jti`, kept until the token expires: a second
-- connection with the same token is refused by whichever instance it reaches.
create table realtime_tickets (
  jti uuid primary key,
  expires_at timestamptz not null
);
create index realtime_tickets_expires_at on realtime_tickets (expires_at);

-- Row-level security as on every platform table; no grant: tenant connections cannot read it.
select force_tenant_rls('realtime_tickets');
