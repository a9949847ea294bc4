-- AI chat: conversations of one user in one tenant, their messages, and the events of each answer
-- (what a client that lost its stream replays), with the answers in production per tenant (the
-- concurrent streams limit) and the messages sent per tenant and day. Also the runtime binding
-- requests of v4 workflows, which an operator answers.

-- The user of the current transaction, beside its tenant: conversations are private to their user.
create or replace function current_user_id() returns uuid
  language sql stable
  as $$ select nullif(current_setting('svc.user_id', true), '')::uuid $$;
grant execute on function current_user_id() to svc_app;

create table chat_conversations (
  tenant_id uuid not null references tenants (id),
  user_id uuid not null references users (id),
  id uuid not null,
  title text not null,
  -- Set when v4 chat started it: the workflow and stage it belongs to.
  workflow_key text,
  stage text,
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now()),
  primary key (tenant_id, user_id, id)
);
create index chat_conversations_recent on chat_conversations (tenant_id, user_id, updated_at desc, id desc);

create table chat_messages (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  user_id uuid not null,
  conversation_id uuid not null,
  role text not null check (role in ('user', 'assistant')),
  -- An assistant message is `streaming` while its answer is produced; its content is stored once
  -- it is `complete`. A `failed` one keeps no content, only what went wrong.
  status text not null check (status in ('streaming', 'complete', 'failed')),
  content text not null default '',
  citations jsonb not null default '[]',
  usage jsonb,
  error jsonb,
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  foreign key (tenant_id, user_id, conversation_id) references chat_conversations (tenant_id, user_id, id) on delete cascade
);
create index chat_messages_conversation on chat_messages (tenant_id, user_id, conversation_id, created_at, id);

-- The events of an answer, numbered from 1: the SSE ids a client resumes from. `message` events
-- keep only their delta; the text so far is their sum.
create table chat_events (
  message_id uuid not null references chat_messages (id) on delete cascade,
  seq integer not null check (seq > 0),
  tenant_id uuid not null,
  user_id uuid not null,
  type text not null check (type in ('status', 'citation', 'message', 'error', 'done')),
  data jsonb not null,
  primary key (message_id, seq)
);

-- Answers in production, visible to the whole tenant (unlike the messages): the concurrent
-- streams it counts. A producer renews its lease; a row whose lease ran out no longer counts.
create table chat_streams (
  message_id uuid primary key references chat_messages (id) on delete cascade,
  tenant_id uuid not null references tenants (id),
  started_at timestamptz not null default clock_timestamp(),
  lease_until timestamptz not null
);
create index chat_streams_tenant on chat_streams (tenant_id, lease_until);

-- Chat messages sent per tenant and UTC day (the ai.chat capability's maxMessagesPerDay).
create table chat_daily_usage (
  tenant_id uuid not null references tenants (id),
  day date not null,
  messages integer not null,
  primary key (tenant_id, day)
);

create policy own_rows on chat_conversations using (tenant_id = current_tenant_id() and user_id = current_user_id())
  with check (tenant_id = current_tenant_id() and user_id = current_user_id());
create policy own_rows on chat_messages using (tenant_id = current_tenant_id() and user_id = current_user_id())
  with check (tenant_id = current_tenant_id() and user_id = current_user_id());
create policy own_rows on chat_events using (tenant_id = current_tenant_id() and user_id = current_user_id())
  with check (tenant_id = current_tenant_id() and user_id = current_user_id());
create policy tenant_rows on chat_streams using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
create policy tenant_rows on chat_daily_usage using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
alter table chat_conversations enable row level security;
alter table chat_messages enable row level security;
alter table chat_events enable row level security;
alter table chat_streams enable row level security;
alter table chat_daily_usage enable row level security;
grant select, insert, update, delete on chat_conversations, chat_messages, chat_events, chat_streams, chat_daily_usage to svc_app;

-- Requests for an operator to bind a v4 workflow to an AI runtime; one open request per workflow.
create table workflow_runtime_requests (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id),
  workflow_key text not null,
  display_name text not null,
  reason text not null,
  state text not null default 'pending' check (state in ('pending', 'approved', 'rejected')),
  requested_by uuid references users (id),
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default date_trunc('milliseconds', now())
);
create unique index workflow_runtime_requests_open on workflow_runtime_requests (tenant_id, workflow_key) where state = 'pending';
alter table workflow_runtime_requests enable row level security;
create policy tenant_rows on workflow_runtime_requests using (tenant_id = current_tenant_id()) with check (tenant_id = current_tenant_id());
grant select, insert, update on workflow_runtime_requests to svc_app;
