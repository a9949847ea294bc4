import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';
import type { ChatEvent, Conversation, Message } from './chat.schema.ts';

/**
 * SQL of conversations, messages and answer events (private to their user: every statement runs
 * after `actAsUser`, so row-level security keeps it to the user's own rows), and of the tenant's
 * answers in production and daily message counts.
 */

/** Sets the transaction's user beside its tenant, for the policies of the conversation tables. */
export async function actAsUser(tx: Tx, userId: string): Promise<void> {
  await tx`select set_config('svc.user_id', ${userId}, true)`;
}

const CONVERSATION_COLUMNS = `c.id::text as id, c.title, ${isoTimestamp('c.created_at')} as "createdAt", ${isoTimestamp('c.updated_at')} as "updatedAt"`;

export interface StoredConversation {
  id: string;
  title: string;
  workflowKey: string | null;
  stage: string | null;
}

export async function findConversation(tx: Tx, id: string, forUpdate = false): Promise<StoredConversation | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<StoredConversation[]>(
    `select id::text as id, title, workflow_key as "workflowKey", stage from chat_conversations
     where tenant_id = current_tenant_id() and user_id = current_user_id() and id = $1::uuid${forUpdate ? ' for update' : ''}`,
    [id],
    { prepare: true },
  );
  return rows[0];
}

/** Starts a conversation under `id`; false when the caller already has one by that id. */
export async function insertConversation(tx: Tx, conversation: StoredConversation): Promise<boolean> {
  const rows = await tx`
    insert into chat_conversations (tenant_id, user_id, id, title, workflow_key, stage)
    values (current_tenant_id(), current_user_id(), ${conversation.id}::uuid, ${conversation.title}, ${conversation.workflowKey}, ${conversation.stage})
    on conflict do nothing returning 1`;
  return rows.length > 0;
}

export async function touchConversation(tx: Tx, id: string): Promise<void> {
  await tx.unsafe(`update chat_conversations set updated_at = ${NOW_MS} where tenant_id = current_tenant_id() and user_id = current_user_id() and id = $1::uuid`, [id], { prepare: true });
}

/** The caller's conversations, most recently active first. */
export function listConversations(tx: Tx, limit: number): Promise<Conversation[]> {
  return tx.unsafe<Conversation[]>(
    `select ${CONVERSATION_COLUMNS},
       (select count(*)::int from chat_messages m where m.tenant_id = c.tenant_id and m.user_id = c.user_id and m.conversation_id = c.id) as "messageCount"
     from chat_conversations c where c.tenant_id = current_tenant_id() and c.user_id = current_user_id()
     order by c.updated_at desc, c.id desc limit $1::text::int`,
    [String(limit)],
    { prepare: true },
  );
}

export async function deleteConversation(tx: Tx, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  const rows = await tx`delete from chat_conversations where tenant_id = current_tenant_id() and user_id = current_user_id() and id = ${id}::uuid returning 1`;
  return rows.length > 0;
}

interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  citations: Message['citations'];
  status: Message['status'];
  error: Message['error'] | null;
  timestamp: string;
}

const MESSAGE_COLUMNS = `id::text as id, role, content, citations, status, error, ${isoTimestamp('created_at')} as timestamp`;

export async function listMessages(tx: Tx, conversationId: string): Promise<Message[]> {
  const rows = await tx.unsafe<MessageRow[]>(
    `select ${MESSAGE_COLUMNS} from chat_messages
     where tenant_id = current_tenant_id() and user_id = current_user_id() and conversation_id = $1::uuid order by created_at, id`,
    [conversationId],
    { prepare: true },
  );
  return rows.map(({ citations, error, ...row }) => ({
    ...row,
    ...(row.role === 'assistant' ? { citations: citations ?? [] } : {}),
    ...(error ? { error } : {}),
  }));
}

/** The conversation's finished turns, oldest first, at most `limit` of the latest: what the model is given as history. */
export function conversationHistory(tx: Tx, conversationId: string, limit: number): Promise<Array<{ role: 'user' | 'assistant'; content: string }>> {
  return tx.unsafe(
    `select role, content from (
       select role, content, created_at, id from chat_messages
       where tenant_id = current_tenant_id() and user_id = current_user_id() and conversation_id = $1::uuid and status = 'complete'
       order by created_at desc, id desc limit $2::text::int) recent
     order by created_at, id`,
    [conversationId, String(limit)],
    { prepare: true },
  );
}

export async function insertMessage(
  tx: Tx,
  message: { conversationId: string; role: 'user' | 'assistant'; status: 'streaming' | 'complete'; content: string },
): Promise<string> {
  const [row] = await tx<[{ id: string }]>`
    insert into chat_messages (tenant_id, user_id, conversation_id, role, status, content)
    values (current_tenant_id(), current_user_id(), ${message.conversationId}::uuid, ${message.role}, ${message.status}, ${message.content})
    returning id::text as id`;
  return row.id;
}

export interface AnswerMessage {
  id: string;
  conversationId: string;
  role: 'user' | 'assistant';
  status: Message['status'];
}

export async function findMessage(tx: Tx, conversationId: string, messageId: string): Promise<AnswerMessage | undefined> {
  if (!UUID.test(conversationId) || !UUID.test(messageId)) return undefined;
  const rows = await tx<AnswerMessage[]>`
    select id::text as id, conversation_id::text as "conversationId", role, status from chat_messages
    where tenant_id = current_tenant_id() and user_id = current_user_id() and id = ${messageId}::uuid and conversation_id = ${conversationId}::uuid`;
  return rows[0];
}

/** Stores the answer once it is complete; false when it is no longer streaming (failed meanwhile, or deleted). */
export async function completeMessage(tx: Tx, id: string, answer: { content: string; citations: unknown[]; usage: object }): Promise<boolean> {
  const rows = await tx.unsafe(
    `update chat_messages set status = 'complete', content = $2, citations = $3::text::jsonb, usage = $4::text::jsonb, updated_at = clock_timestamp()
     where id = $1::uuid and status = 'streaming' returning 1`,
    [id, answer.content, JSON.stringify(answer.citations), JSON.stringify(answer.usage)],
    { prepare: true },
  );
  return rows.length > 0;
}

/** Marks a streaming answer failed, keeping none of its text; false when it was no longer streaming. */
export async function failMessage(tx: Tx, id: string, error: { code: string; message: string }): Promise<boolean> {
  const rows = await tx.unsafe(
    `update chat_messages set status = 'failed', content = '', error = $2::text::jsonb, updated_at = clock_timestamp()
     where id = $1::uuid and status = 'streaming' returning 1`,
    [id, JSON.stringify(error)],
    { prepare: true },
  );
  return rows.length > 0;
}

/** A `message` event keeps only its delta in storage: its text so far is the sum of the deltas before. */
const storedData = (event: ChatEvent) => (event.type === 'message' ? { delta: event.data.delta } : event.data);

/** Appends numbered events of an answer (one statement). */
export async function insertEvents(tx: Tx, messageId: string, events: Array<{ id: number; event: ChatEvent }>): Promise<void> {
  if (!events.length) return;
  const rows = events.map(({ id, event }) => ({ seq: id, type: event.type, data: storedData(event) }));
  await tx.unsafe(
    `insert into chat_events (message_id, seq, tenant_id, user_id, type, data)
     select $1::uuid, e.seq, current_tenant_id(), current_user_id(), e.type, e.data
     from jsonb_to_recordset($2::text::jsonb) as e(seq int, type text, data jsonb)`,
    [messageId, JSON.stringify(rows)],
    { prepare: true },
  );
}

/** Stored events of an answer after `afterSeq`, in order; a `message` event's data holds only its delta. */
export function readStoredEvents(tx: Tx, messageId: string, afterSeq: number): Promise<Array<{ seq: number; type: ChatEvent['type']; data: Record<string, unknown> }>> {
  return tx`select seq, type, data from chat_events where message_id = ${messageId}::uuid and seq > ${afterSeq} order by seq`;
}

/** An answer's status, and whether its producer still renews its lease (one snapshot). */
export async function answerState(tx: Tx, messageId: string): Promise<{ status: Message['status']; live: boolean } | undefined> {
  const rows = await tx<Array<{ status: Message['status']; live: boolean }>>`
    select m.status, exists (select 1 from chat_streams s where s.message_id = m.id and s.lease_until > clock_timestamp()) as live
    from chat_messages m where m.id = ${messageId}::uuid`;
  return rows[0];
}

/** The number of the answer's last stored event (0 for none). */
export async function lastEventSeq(tx: Tx, messageId: string): Promise<number> {
  const [row] = await tx<[{ seq: number }]>`select coalesce(max(seq), 0)::int as seq from chat_events where message_id = ${messageId}::uuid`;
  return row.seq;
}

/** Wakes followers of the answer in other processes (delivered when the transaction commits). */
export async function announceEvents(tx: Tx, channel: string, messageId: string): Promise<void> {
  await tx`select pg_notify(${channel}, ${messageId})`;
}

// Answers in production (visible tenant-wide).

/** Serialises the tenant's stream starts, so that two cannot both take the last free stream. */
export async function lockTenantStreams(tx: Tx): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('svc.chat_streams'), hashtext(current_tenant_id()::text))`;
}

/** Answers in production whose producer still renews its lease. */
export async function countLiveStreams(tx: Tx): Promise<number> {
  const [row] = await tx<[{ count: number }]>`select count(*)::int as count from chat_streams where tenant_id = current_tenant_id() and lease_until > clock_timestamp()`;
  return row.count;
}

export async function insertStream(tx: Tx, messageId: string, leaseMs: number): Promise<void> {
  await tx`
    insert into chat_streams (message_id, tenant_id, lease_until)
    values (${messageId}::uuid, current_tenant_id(), clock_timestamp() + ${leaseMs} * interval '1 millisecond')`;
}

export async function renewStream(tx: Tx, messageId: string, leaseMs: number): Promise<void> {
  await tx`update chat_streams set lease_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond' where message_id = ${messageId}::uuid`;
}

export async function deleteStream(tx: Tx, messageId: string): Promise<void> {
  await tx`delete from chat_streams where message_id = ${messageId}::uuid`;
}

// Messages per tenant and UTC day.

/** Counts one message for today; returns today's count with it. */
export async function countMessageToday(tx: Tx): Promise<number> {
  const [row] = await tx<[{ messages: number }]>`
    insert into chat_daily_usage (tenant_id, day, messages) values (current_tenant_id(), (now() at time zone 'UTC')::date, 1)
    on conflict (tenant_id, day) do update set messages = chat_daily_usage.messages + 1
    returning messages`;
  return row.messages;
}

/**
 * Records that an orchestrate step's message was counted; false when it already was (the step's
 * activity is being retried), so that its message is not counted again.
 */
export async function recordStepCharge(tx: Tx, step: { executionId: string; stepId: string }): Promise<boolean> {
  const rows = await tx`
    insert into chat_step_charges (tenant_id, execution_id, step_id) values (current_tenant_id(), ${step.executionId}::uuid, ${step.stepId})
    on conflict do nothing returning 1`;
  return rows.length === 1;
}

/**
 * How long a step's charge is kept: far longer than every attempt of a step takes (five of at most
 * 5 minutes each, and the waits between them), so a step retried on another UTC day than its
 * charge, or after workers were down for days, still finds it and is not counted again.
 */
export const STEP_CHARGE_RETENTION_DAYS = 7;

/**
 * Platform work: removes up to `limit` step charges of every tenant older than
 * {@link STEP_CHARGE_RETENTION_DAYS}, whatever the day they were made in. Answers how many.
 */
export async function deletePastStepCharges(tx: Tx, limit: number): Promise<number> {
  const rows = await tx.unsafe(
    `delete from chat_step_charges where ctid = any(array(
       select ctid from chat_step_charges where charged_at < now() - $2::int * interval '1 day' limit $1::int for update skip locked))
     returning 1`,
    [limit, STEP_CHARGE_RETENTION_DAYS],
  );
  return rows.length;
}

export async function messagesToday(tx: Tx): Promise<number> {
  const [row] = await tx<[{ messages: number } | undefined]>`
    select messages from chat_daily_usage where tenant_id = current_tenant_id() and day = (now() at time zone 'UTC')::date`;
  return row?.messages ?? 0;
}

/** Serializes the current tenant's new followers of answers until the transaction ends. */
export async function lockTenantFollowers(tx: Tx): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('svc.chat_followers'), hashtext(current_tenant_id()::text))`;
}

/** Followers whose lease runs, of the current user and of one message. */
export async function countLiveFollowers(tx: Tx, messageId: string): Promise<{ ofUser: number; ofMessage: number }> {
  const [row] = await tx<[{ ofUser: number; ofMessage: number }]>`
    select count(*) filter (where user_id = current_user_id())::int as "ofUser", count(*) filter (where message_id = ${messageId}::uuid)::int as "ofMessage"
    from chat_followers where tenant_id = current_tenant_id() and lease_until > clock_timestamp()`;
  return row;
}

export async function insertFollower(tx: Tx, messageId: string, leaseMs: number): Promise<string> {
  const [row] = await tx<[{ id: string }]>`
    insert into chat_followers (tenant_id, user_id, message_id, lease_until)
    values (current_tenant_id(), current_user_id(), ${messageId}::uuid, clock_timestamp() + ${leaseMs} * interval '1 millisecond')
    returning id::text as id`;
  return row.id;
}

export async function renewFollower(tx: Tx, id: string, leaseMs: number): Promise<void> {
  await tx`update chat_followers set lease_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond' where id = ${id}::uuid`;
}

/** Removes a follower, and any of the tenant whose lease ran out. */
export async function deleteFollower(tx: Tx, id: string): Promise<void> {
  await tx`delete from chat_followers where tenant_id = current_tenant_id() and (id = ${id}::uuid or lease_until < clock_timestamp())`;
}
