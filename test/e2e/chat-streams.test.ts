import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { chatEvent, openSse, type SseStream } from '../harness/sse-client.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { createTenantWithUsers } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * Chat streams answered by an OpenAI-compatible endpoint (a local server speaking its wire
 * format, test/harness/openai-compatible-endpoint.ts), on two edge instances that share only the
 * database: an answer that goes on when its client leaves and is resumed, heartbeats, a model
 * failing midway, and the tenant's concurrent streams.
 */
describe('chat streams', () => {
  const slug = `streams-${randomBytes(4).toString('hex')}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let endpoint: Awaited<ReturnType<typeof startScriptedEndpoint>>;
  let stack: TestStack;
  let other: TestStack;
  let tenantId: string;
  let alice: DevUser;
  let apollo: any;

  beforeAll(async () => {
    endpoint = await startScriptedEndpoint();
    const fixture = await createTenantWithUsers(sql, { slug, plan: 'team', users: { alice: ['admin'] } });
    tenantId = fixture.tenantId;
    alice = fixture.users.alice!;
    const options = { devUsers: [...DEV_USERS, alice], ai: endpoint.settings, sseHeartbeatMs: 200 };
    [stack, other] = await Promise.all([startTestStack(options), startTestStack(options)]);
    apollo = (await stack.request('POST', `${V3}/resources/project`, { as: alice.email, body: { name: 'Apollo', status: 'active', budget: 900 } })).body;
  });
  afterAll(async () => {
    await sql.end();
    await Promise.all([stack?.close(), other?.close()]);
    await endpoint?.close();
  });

  const ask = (question: string, on = stack) => openSse(on, 'POST', `${V3}/chat`, { as: alice.email, body: { message: question, options: { context: { resources: [{ type: 'project', id: apollo.id }] } } } });
  const eventsPath = (stream: SseStream) => `${V3}/chat/conversations/${stream.headers.get('x-conversation-id')}/messages/${stream.headers.get('x-message-id')}/events`;
  /** Reads events up to and including the first `message` event; returns the last id read. */
  async function readToFirstPiece(stream: SseStream): Promise<number> {
    for (;;) {
      const next = await stream.next();
      if (!next) throw new Error('the stream ended before the answer began');
      if (chatEvent(next).type === 'message') return Number(next.id);
    }
  }
  const assistantOf = async (stream: SseStream, on = stack) =>
    (await on.request('GET', `${V3}/chat/conversations/${stream.headers.get('x-conversation-id')}`, { as: alice.email })).body.messages.at(-1);

  it('goes on producing an answer whose client left, which the client resumes on another edge instance midway', async () => {
    const stream = await ask('What is the budget of Apollo? [hold:midway]');
    expect(stream.status).toBe(200);
    const lastId = await readToFirstPiece(stream);
    await endpoint.held('midway');
    stream.close();
    // Still being produced: the other instance has only what is stored, and follows the rest.
    const resumed = await openSse(other, 'GET', eventsPath(stream), { as: alice.email, headers: { 'last-event-id': String(lastId) } });
    expect(resumed.status).toBe(200);
    endpoint.release('midway');
    const rest = await resumed.rest();
    expect(rest.map((m) => Number(m.id))).toEqual(rest.map((_, i) => lastId + 1 + i));
    const events = rest.map(chatEvent);
    const pieces = events.filter((e) => e.type === 'message');
    expect(pieces.at(-1)!.data.content).toBe(endpoint.answer);
    expect(events.filter((e) => e.type === 'citation').map((e) => e.data)).toEqual([
      { source: `project/${apollo.id}`, sourceType: 'resource', content: expect.stringContaining('budget: 900'), confidence: 1 },
    ]);
    expect(events.at(-1)).toEqual({ type: 'done', data: expect.objectContaining({ usage: { promptTokens: 50, completionTokens: 10, totalTokens: 60 } }) });
    expect(await assistantOf(stream, other)).toMatchObject({ status: 'complete', content: endpoint.answer });
  });

  it('stores the whole answer while nobody follows it, and replays what the client missed', async () => {
    const stream = await ask('What is the budget of Apollo? [hold:alone]');
    const lastId = await readToFirstPiece(stream);
    await endpoint.held('alone');
    stream.close();
    endpoint.release('alone');
    const stored = await until(() => assistantOf(stream), (message) => message.status === 'complete');
    expect(stored).toMatchObject({ content: endpoint.answer, citations: [{ source: `project/${apollo.id}` }] });
    const resumed = await openSse(stack, 'GET', eventsPath(stream), { as: alice.email, headers: { 'last-event-id': String(lastId) } });
    const rest = (await resumed.rest()).map(chatEvent);
    expect(rest.filter((e) => e.type === 'message').map((e) => e.data.delta).join('')).toBe(endpoint.answer.slice('Apollo has '.length));
    expect(rest.at(-1)!.type).toBe('done');
  });

  it('sends a comment heartbeat while an answer is idle', async () => {
    const stream = await ask('Budget? [hold:idle]');
    await readToFirstPiece(stream);
    expect((await stream.comment()).trim()).toBe('keep-alive');
    endpoint.release('idle');
    expect((await stream.rest()).map(chatEvent).at(-1)!.type).toBe('done');
  });

  it('ends with an error event when the model fails midway, storing the answer as failed without its text', async () => {
    const stream = await ask('What is the budget of Apollo? [fail]');
    const events = (await stream.rest()).map(chatEvent);
    expect(events.map((e) => e.type)).toEqual(['status', 'status', 'message', 'error']);
    expect(events.at(-1)).toEqual({ type: 'error', data: { code: 'BAD_GATEWAY', message: expect.stringMatching(/^the AI endpoint stream broke/) } });
    expect(await assistantOf(stream)).toEqual({
      id: stream.headers.get('x-message-id'),
      role: 'assistant',
      content: '',
      citations: [],
      status: 'failed',
      error: events.at(-1)!.data,
      timestamp: expect.any(String),
    });
    // Replayed, it is the same failure.
    const replay = (await (await openSse(other, 'GET', eventsPath(stream), { as: alice.email })).rest()).map(chatEvent);
    expect(replay).toEqual(events);
  });

  it('turns a model that refuses for load into a RATE_LIMIT_EXCEEDED error event once the stream has started', async () => {
    const stream = await ask('Budget? [busy]');
    expect(stream.status).toBe(200);
    const events = (await stream.rest()).map(chatEvent);
    expect(events.at(-1)).toEqual({ type: 'error', data: { code: 'RATE_LIMIT_EXCEEDED', message: 'the AI endpoint refused the request for load' } });
  });

  it('counts concurrent streams per tenant across edge instances: one past the limit is 429 with retryAfter', async () => {
    const override = await stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/ai.chat`, {
      as: PLATFORM_ADMIN,
      body: { allowed: true, limits: { maxConcurrentStreams: 2 }, reason: 'two streams' },
    });
    expect(override.status).toBe(200);
    try {
      const first = await ask('Budget? [hold:c1]');
      const second = await ask('Budget? [hold:c2]', other);
      await Promise.all([endpoint.held('c1'), endpoint.held('c2')]);
      const third = await ask('Budget?', other);
      expect(third.status).toBe(429);
      expect(third.json.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
      expect(third.headers.get('retry-after')).toBe(String(third.json.error.retryAfter));
      endpoint.release('c1');
      endpoint.release('c2');
      for (const stream of [first, second]) expect((await stream.rest()).map(chatEvent).at(-1)!.type).toBe('done');
      const fourth = await ask('Budget?', other);
      expect(fourth.status).toBe(200);
      await fourth.rest();
    } finally {
      await stack.request('DELETE', `/v4/platform/capabilities/overrides/${tenantId}/ai.chat`, { as: PLATFORM_ADMIN });
    }
  });

  it('allows 100 concurrent streams by default; a stream whose producer stopped renewing no longer counts and is resumed as failed', async () => {
    const [user] = await sql<[{ id: string }]>`select id::text from users where email = ${alice.email}`;
    const [conversation] = await sql<[{ id: string }]>`
      insert into chat_conversations (tenant_id, user_id, id, title) values (${tenantId}::uuid, ${user.id}::uuid, gen_random_uuid(), 'load') returning id::text`;
    const messages = await sql<{ id: string }[]>`
      insert into chat_messages (tenant_id, user_id, conversation_id, role, status)
      select ${tenantId}::uuid, ${user.id}::uuid, ${conversation.id}::uuid, 'assistant', 'streaming' from generate_series(1, 100) returning id::text`;
    await sql`insert into chat_streams (message_id, tenant_id, lease_until) select id, ${tenantId}::uuid, now() + interval '10 minutes' from chat_messages where conversation_id = ${conversation.id}::uuid`;
    try {
      const refused = await ask('Budget?');
      expect(refused.status).toBe(429);
      // Their producers stop renewing: the streams no longer count.
      await sql`update chat_streams set lease_until = now() - interval '1 second' where message_id in (select id from chat_messages where conversation_id = ${conversation.id}::uuid)`;
      const accepted = await ask('Budget?');
      expect(accepted.status).toBe(200);
      await accepted.rest();
      const orphan = await openSse(other, 'GET', `${V3}/chat/conversations/${conversation.id}/messages/${messages[0]!.id}/events`, { as: alice.email });
      expect((await orphan.rest()).map(chatEvent)).toEqual([{ type: 'error', data: { code: 'INTERNAL_ERROR', message: 'the answer was interrupted before it was finished' } }]);
      const [stored] = await sql<[{ status: string }]>`select status from chat_messages where id = ${messages[0]!.id}::uuid`;
      expect(stored.status).toBe('failed');
    } finally {
      await sql`delete from chat_conversations where id = ${conversation.id}::uuid`;
    }
  });
});
