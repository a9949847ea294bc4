import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { countTokens } from '../../control-plane/ai/tokens.ts';
import { form, postForm } from '../harness/documents.ts';
import { chatEvent, openSse, type SseMessage } from '../harness/sse-client.ts';
import { GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { indexChunks } from '../harness/search-index.ts';
import { createTenantWithUsers } from '../harness/tenant-fixture.ts';

/**
 * v3 chat with the local model, through HTTP with a real SSE client: the events of an answer and
 * their ids, stored conversations private to their user, replay with Last-Event-ID on this and on
 * another edge instance, and refusals before any stream starts.
 */
describe('v3 chat', () => {
  const slug = `chat-${randomBytes(4).toString('hex')}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenantId: string;
  let alice: string;
  let bob: string;
  let carol: string;
  let apollo: any;
  let zephyr: any;
  let users: DevUser[];
  /** The administrator of a tenant on the free plan, which does not include ai.chat. */
  let freeAdmin: string;

  beforeAll(async () => {
    const fixture = await createTenantWithUsers(sql, { slug, plan: 'team', users: { alice: ['admin'], bob: ['member'], carol: ['chatter'] } });
    await sql`insert into roles (tenant_id, name, permissions) values (${fixture.tenantId}::uuid, 'chatter', ${['chat.access']})`;
    tenantId = fixture.tenantId;
    alice = fixture.users.alice!.email;
    bob = fixture.users.bob!.email;
    carol = fixture.users.carol!.email;
    users = Object.values(fixture.users);
    const free = await createTenantWithUsers(sql, { slug: `${slug}-free`, plan: 'free', users: { admin: ['admin'] } });
    freeAdmin = free.users.admin!.email;
    stack = await startTestStack({ devUsers: [...DEV_USERS, ...users, free.users.admin!] });
    const project = async (body: object) => (await stack.request('POST', `${V3}/resources/project`, { as: alice, body })).body;
    apollo = await project({ name: 'Apollo', status: 'active', budget: 900, metadata: { goal: 'Apollo builds the lunar lander.' } });
    zephyr = await project({ name: 'Zephyr', status: 'completed', budget: 120 });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const ask = (body: unknown, as = alice) => openSse(stack, 'POST', `${V3}/chat`, { as, body });
  const events = (messages: SseMessage[]) => messages.map(chatEvent);
  /** Events with their ids, parsed: replayed events are the same events, whatever the order of their keys. */
  const numbered = (messages: SseMessage[]) => messages.map((m) => ({ id: m.id, event: chatEvent(m) }));
  const context = () => ({ resources: [{ type: 'project', id: apollo.id }, { type: 'project', id: zephyr.id }] });

  it('streams status, the answer as it grows, its citations and done, each event with its id', async () => {
    const stream = await ask({ message: 'What is the budget of Apollo?', options: { context: context(), temperature: 0.2, maxTokens: 100 } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toContain('no-cache');
    // Counted in the tenant's budget of the v3 API, as every request.
    expect(Number(stream.headers.get('x-ratelimit-remaining'))).toBeLessThan(Number(stream.headers.get('x-ratelimit-limit')));
    const conversationId = stream.headers.get('x-conversation-id');
    const messageId = stream.headers.get('x-message-id');
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    const received = await stream.rest();
    // The stream opens with a comment, before the first event.
    expect(stream.raw.startsWith(':')).toBe(true);
    expect(received.map((m) => Number(m.id))).toEqual(received.map((_, i) => i + 1));
    const all = events(received);
    expect(all[0]).toEqual({ type: 'status', data: { status: 'searching', message: expect.any(String) } });
    expect(all[1]).toEqual({ type: 'status', data: { status: 'answering', message: 'Answering from 2 passage(s)' } });
    const messages = all.filter((e) => e.type === 'message');
    expect(messages.length).toBeGreaterThan(1);
    let content = '';
    for (const message of messages) {
      content += message.data.delta;
      expect(message.data.content).toBe(content);
    }
    expect(content).toContain('budget: 900.');
    // The local model answers with the context's sentences that share the question's terms, citing each source it quoted.
    const citations = all.filter((e) => e.type === 'citation').map((e) => e.data);
    expect(citations[0]).toEqual({ source: `project/${apollo.id}`, sourceType: 'resource', content: expect.any(String), confidence: 1 });
    for (const citation of citations) {
      expect(content).toContain(citation.content);
      expect(citation.confidence).toBeGreaterThan(0);
      expect(citation.confidence).toBeLessThanOrEqual(1);
    }
    const done = all.at(-1)!;
    expect(done).toEqual({ type: 'done', data: { conversationId, messageId, usage: { promptTokens: expect.any(Number), completionTokens: countTokens(content), totalTokens: expect.any(Number) } } });
    expect(done.data.usage.totalTokens).toBe(done.data.usage.promptTokens + done.data.usage.completionTokens);

    const stored = await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice });
    expect(stored.status).toBe(200);
    expect(stored.body.messages).toEqual([
      { id: expect.any(String), role: 'user', content: 'What is the budget of Apollo?', status: 'complete', timestamp: expect.any(String) },
      { id: messageId, role: 'assistant', content, citations, status: 'complete', timestamp: expect.any(String) },
    ]);
  });

  it("finds the tenant's own documents and resources through hybrid search when no context is named", async () => {
    const handbook = randomUUID();
    await indexChunks(tenantId, { kind: 'document', id: handbook, type: 'handbook' }, [
      { content: 'Vacation requests need two weeks notice. Expenses are reimbursed monthly.', metadata: { pageNumber: 3 } },
      { content: 'The office opens at nine.', metadata: { pageNumber: 4 } },
    ]);
    await indexChunks(tenantId, { kind: 'resource', id: apollo.id, type: 'project' }, [{ content: 'Apollo launches from pad 39A.' }]);
    const stream = await ask({ message: 'How much notice do vacation requests need?' });
    const all = events(await stream.rest());
    expect(all.at(-1)!.type).toBe('done');
    expect(all.filter((e) => e.type === 'message').at(-1)!.data.content).toContain('Vacation requests need two weeks notice.');
    expect(all.filter((e) => e.type === 'citation')[0]!.data).toEqual({ source: handbook, sourceType: 'document', content: 'Vacation requests need two weeks notice.', confidence: 1 });
    const launch = events(await (await ask({ message: 'Where does Apollo launch from?' })).rest());
    expect(launch.filter((e) => e.type === 'citation').map((e) => e.data.source)).toContain(`project/${apollo.id}`);
  });

  it('searches and reads context only where the caller may read: documents.read, resources.read', async () => {
    const refused = await ask({ message: 'What is the budget of Apollo?', options: { context: context() } }, carol);
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain('resources.read');
    const answered = events(await (await ask({ message: 'How much notice do vacation requests need?' }, carol)).rest());
    // Nothing to search for this caller: no `searching`, no sources.
    expect(answered.map((e) => e.type)).toEqual(['status', ...answered.slice(1, -1).map(() => 'message'), 'done']);
    expect(answered[0]!.data).toEqual({ status: 'answering', message: 'Answering without sources' });
  });

  it('continues a conversation, lists the caller’s own newest first with title and message count, and deletes one', async () => {
    const first = await ask({ message: 'Which project is completed?', options: { context: context() } });
    const conversationId = first.headers.get('x-conversation-id')!;
    expect(events(await first.rest()).at(-1)!.type).toBe('done');
    const second = await ask({ message: 'And what was its budget?', conversationId, options: { context: context() } });
    expect(second.headers.get('x-conversation-id')).toBe(conversationId);
    expect(events(await second.rest()).at(-1)!.type).toBe('done');

    const list = await stack.request('GET', `${V3}/chat/conversations`, { as: alice });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toEqual({ id: conversationId, title: 'Which project is completed?', messageCount: 4, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(list.body.data.length).toBeGreaterThanOrEqual(2);
    expect((await stack.request('GET', `${V3}/chat/conversations`, { as: bob })).body.data).toEqual([]);

    expect((await stack.request('DELETE', `${V3}/chat/conversations/${conversationId}`, { as: alice })).status).toBe(204);
    expect((await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice })).status).toBe(404);
    expect((await stack.request('DELETE', `${V3}/chat/conversations/${conversationId}`, { as: alice })).status).toBe(404);
    const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from chat_messages where conversation_id = ${conversationId}::uuid`;
    expect(count).toBe(0);
  });

  it('replays what a client missed after Last-Event-ID, here and on another edge instance', async () => {
    const stream = await ask({ message: 'What does Apollo build?', options: { context: context() } });
    const conversationId = stream.headers.get('x-conversation-id')!;
    const messageId = stream.headers.get('x-message-id')!;
    const full = await stream.rest();
    const path = `${V3}/chat/conversations/${conversationId}/messages/${messageId}/events`;

    const resumed = await openSse(stack, 'GET', path, { as: alice, headers: { 'last-event-id': '3' } });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-message-id')).toBe(messageId);
    expect(numbered(await resumed.rest())).toEqual(numbered(full.slice(3)));

    // Another edge with its own control plane: it has only the stored events.
    const other = await startTestStack({ devUsers: [...DEV_USERS, ...users] });
    try {
      const elsewhere = await openSse(other, 'GET', path, { as: alice, headers: { 'last-event-id': '1' } });
      expect(numbered(await elsewhere.rest())).toEqual(numbered(full.slice(1)));
      const fromStart = await openSse(other, 'GET', path, { as: alice });
      expect(numbered(await fromStart.rest())).toEqual(numbered(full));
    } finally {
      await other.close();
    }
    const past = await openSse(stack, 'GET', path, { as: alice, headers: { 'last-event-id': String(full.length) } });
    expect(await past.rest()).toEqual([]);
  });

  it("keeps conversations to their user: another user's is 404 on every route", async () => {
    const stream = await ask({ message: 'What is the budget of Zephyr?', options: { context: context() } });
    const conversationId = stream.headers.get('x-conversation-id')!;
    const messageId = stream.headers.get('x-message-id')!;
    await stream.rest();
    const conversation = `${V3}/chat/conversations/${conversationId}`;
    expect((await stack.request('GET', conversation, { as: bob })).status).toBe(404);
    expect((await stack.request('DELETE', conversation, { as: bob })).status).toBe(404);
    const resume = await openSse(stack, 'GET', `${conversation}/messages/${messageId}/events`, { as: bob });
    expect(resume.status).toBe(404);
    expect(resume.json.error.code).toBe('NOT_FOUND');
    const continued = await ask({ message: 'Take it over', conversationId }, bob);
    expect(continued.status).toBe(404);
    // Another tenant's administrator: refused naming the tenant, and not found in its own.
    const named = await openSse(stack, 'GET', conversation, { as: GLOBEX_ADMIN, headers: { 'x-tenant-id': slug } });
    expect(named.status).toBe(403);
    expect((await stack.request('GET', conversation, { as: GLOBEX_ADMIN })).status).toBe(404);
    expect((await stack.request('GET', conversation, { as: alice })).body.messages).toHaveLength(2);
  });

  it('answers from a document the request names, read even before it is indexed, and refuses another tenant’s', async () => {
    const text = 'Maintenance log.\n\nThe hangar door of site Tycho jams when the temperature falls below minus ten degrees.\n\nCoffee is served at nine.';
    const stored = await postForm(stack, `${V3}/documents`, await stack.token(alice), form([{ filename: 'hangar.txt', bytes: new TextEncoder().encode(text) }, ['autoIndex', 'false'], ['autoClassify', 'false']]));
    expect(stored.status).toBe(201);
    const stream = await ask({ message: 'Why does the hangar door of Tycho jam?', options: { context: { documents: [stored.body.id] } } });
    expect(stream.status).toBe(200);
    const all = events(await stream.rest());
    const done = all.find((e) => e.type === 'done');
    expect(done).toBeDefined();
    const citations = all.filter((e) => e.type === 'citation').map((e) => e.data);
    expect(citations[0]).toEqual({ source: stored.body.id, sourceType: 'document', content: expect.stringContaining('hangar door'), confidence: expect.any(Number) });
    expect(all.filter((e) => e.type === 'message').at(-1)!.data.content).toContain('below minus ten degrees');

    // Globex's document is no document of this tenant: refused before any stream starts.
    const theirs = await postForm(stack, `${V3}/documents`, await stack.token(GLOBEX_ADMIN), form([{ filename: 'secret.txt', bytes: new TextEncoder().encode('The hangar code is 4711.') }, ['autoIndex', 'false'], ['autoClassify', 'false']]));
    expect(theirs.status).toBe(201);
    const refused = await ask({ message: 'What is the hangar code?', options: { context: { documents: [theirs.body.id] } } });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'options.context.documents.0' } });
  });

  it.each<[string, unknown, number, string]>([
    ['no message', { options: {} }, 400, 'message'],
    ['an empty message', { message: '   ' }, 400, 'message'],
    ['a temperature above 1', { message: 'Hi', options: { temperature: 1.5 } }, 400, 'options.temperature'],
    ['maxTokens of 0', { message: 'Hi', options: { maxTokens: 0 } }, 400, 'options.maxTokens'],
    ['an unknown option', { message: 'Hi', options: { topK: 3 } }, 400, 'options.topK'],
    ['a context resource the tenant does not have', { message: 'Hi', options: { context: { resources: [{ type: 'project', id: randomUUID() }] } } }, 400, 'options.context.resources.0'],
    ['a context document the tenant does not have', { message: 'Hi', options: { context: { documents: [randomUUID()] } } }, 400, 'options.context.documents.0'],
    ['a conversation the caller does not have', { message: 'Hi', conversationId: randomUUID() }, 404, ''],
  ])('refuses %s with a JSON error before any stream starts, storing nothing', async (_label, body, status, field) => {
    const before = await sql<[{ count: number }]>`select count(*)::int as count from chat_conversations where tenant_id = ${tenantId}::uuid`;
    const refused = await ask(body);
    expect(refused.status).toBe(status);
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    if (field) expect(refused.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    const after = await sql<[{ count: number }]>`select count(*)::int as count from chat_conversations where tenant_id = ${tenantId}::uuid`;
    expect(after[0].count).toBe(before[0].count);
  });

  it('refuses a tenant without ai.chat (403, naming it) and a resume of an id that is not an event id (400)', async () => {
    const free = await openSse(stack, 'POST', `${V3}/chat`, { as: freeAdmin, body: { message: 'Hello?' } });
    expect(free.status).toBe(403);
    expect(free.json.error.message).toContain('capability ai.chat');
    const stream = await ask({ message: 'Budget of Apollo?', options: { context: context() } });
    await stream.rest();
    const path = `${V3}/chat/conversations/${stream.headers.get('x-conversation-id')}/messages/${stream.headers.get('x-message-id')}/events`;
    const bad = await openSse(stack, 'GET', path, { as: alice, headers: { 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.field).toBe('lastEventId');
  });
});
