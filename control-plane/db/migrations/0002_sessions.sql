-- Browser sessions of the backend-for-frontend: tokens stay on the server, the browser holds only
-- a random session id, of which only the SHA-256 is stored.
create table sessions (
  id_hash text primary key,
  subject text not null,
  access_token text not null,
  refresh_token text,
  id_token text,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index sessions_expires on sessions (expires_at);
