import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { chatEvent, openSse } from '../harness/sse-client.ts';
import { ADMIN, GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { indexChunks } from '../harness/search-index.ts';
import { createTenantWithUsers } from '../harness/tenant-fixture.ts';

/**
 * v4 chat per workflow and stage, driven by the tenant's `shared-workflow-config`,
 * `shared-chatbot-config` and `shared-ai-profile` resources: JSON and SSE (ending with
 * `data: [DONE]`) answers, conversations named by the client, refusals. A profile with the local
 * provider answers with the local model; another goes to the OpenAI-compatible endpoint (a local
 * server speaking its wire format), which also answers the orchestrate `ai_chat` step.
 */
describe('v4 AI chat', () => {
  const slug = `aichat-${randomBytes(4).toString('hex')}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let endpoint: Awaited<ReturnType<typeof startScriptedEndpoint>>;
  let stack: TestStack;
  let tenantId: string;
  let alice: DevUser;
  let bob: DevUser;

  beforeAll(async () => {
    endpoint = await startScriptedEndpoint();
    const fixture = await createTenantWithUsers(sql, { slug, plan: 'team', users: { alice: ['admin'], bob: ['member'] } });
    tenantId = fixture.tenantId;
    alice = fixture.users.alice!;
    bob = fixture.users.bob!;
    stack = await startTestStack({ devUsers: [...DEV_USERS, alice, bob], ai: endpoint.settings });
    const create = async (type: string, data: object) => {
      const response = await stack.request('POST', `/v4/data/resources/${tenantId}/${type}`, { as: alice.email, body: { data } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
    };
    await create('shared-workflow-config', {
      workflowKey: 'helpdesk',
      status: 'active',
      stages: [{ id: 'triage', prompt: 'Triage the request of {{customer}} ({{tier}}).' }, { id: 'chat' }],
      aiProfileKey: 'local-profile',
    });
    await create('shared-ai-profile', { profileKey: 'local-profile', provider: 'local', maxTokens: 200 });
    await create('shared-chatbot-config', { workflowKey: 'helpdesk', status: 'active', systemPrompt: 'You are the helpdesk.' });
    await create('shared-workflow-config', { workflowKey: 'hosted', status: 'active', stages: [{ id: 'triage', prompt: 'Triage for {{customer}}.' }] });
    await create('shared-ai-profile', { profileKey: 'hosted-profile', provider: 'openai', model: 'gpt-test', temperature: 0.1, systemPrompt: 'Be exact.' });
    await create('shared-chatbot-config', { workflowKey: 'hosted', status: 'active', stage: 'triage', aiProfileKey: 'hosted-profile', systemPrompt: 'You triage.' });
    await create('shared-workflow-config', { workflowKey: 'unbound', status: 'active' });
    await indexChunks(tenantId, { kind: 'document', id: randomUUID(), type: 'guide' }, [{ content: 'To reset your password, open Settings and choose Reset password. Passwords expire yearly.' }]);
    await create('shared-workflow-config', { workflowKey: 'paused', status: 'draft' });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    await endpoint?.close();
  });

  const chat = (path: string, body: unknown, as = alice.email) => stack.request('POST', `/v4/ai/chat/${tenantId}/${path}`, { as, body });

  it('answers a stage in JSON, and the stream gives the same answer and citations, ending with data: [DONE]', async () => {
    const answered = await chat('helpdesk/chat', { message: 'How do I reset my password?' });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toEqual({
      answer: expect.any(String),
      citations: expect.any(Array),
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      conversationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      messageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workflowId: 'helpdesk',
      stage: 'chat',
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) },
    });
    expect(answered.body.conversationId).toBe(answered.body.conversation_id);

    const stream = await openSse(stack, 'POST', `/v4/ai/chat/stream/${tenantId}/helpdesk/chat`, { as: alice.email, body: { message: 'How do I reset my password?' } });
    expect(stream.status).toBe(200);
    const events = (await stream.rest()).filter((m) => m.data !== '[DONE]').map(chatEvent);
    expect(stream.raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { conversationId: stream.headers.get('x-conversation-id') } });
    expect(events.filter((e) => e.type === 'message').at(-1)!.data.content).toBe(answered.body.answer);
    expect(answered.body.answer).toContain('To reset your password, open Settings and choose Reset password.');
    expect(answered.body.citations).toEqual([expect.objectContaining({ sourceType: 'document' })]);
    expect(events.filter((e) => e.type === 'citation').map((e) => e.data)).toEqual(answered.body.citations);
  });

  it('continues the conversation the client names, starting it under that id; another user gets one of their own', async () => {
    const conversationId = randomUUID();
    const first = await chat('helpdesk/triage', { message: 'My printer is on fire', conversation_id: conversationId, params: { customer: 'Ada', tier: 'gold' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ conversationId, stage: 'triage' });
    const second = await chat('helpdesk/triage', { message: 'Still burning', conversation_id: conversationId });
    expect(second.body.conversationId).toBe(conversationId);
    const stored = await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice.email });
    expect(stored.body.messages.map((m: any) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    const bobs = await chat('helpdesk/triage', { message: 'Mine too', conversation_id: conversationId }, bob.email);
    expect(bobs.status).toBe(200);
    expect((await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: bob.email })).body.messages).toHaveLength(2);
    expect((await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice.email })).body.messages).toHaveLength(4);
  });

  it('takes any conversation_id a client makes up, not only a UUID: the same name continues the same conversation, per user', async () => {
    const name = `support-${randomBytes(3).toString('hex')}`;
    const first = await chat('helpdesk/chat', { message: 'My printer is on fire', conversation_id: name });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The answer names it as the request does; the name it answered with first stays beside it.
    expect(first.body).toMatchObject({ conversation_id: name, conversationId: name });
    const stream = await openSse(stack, 'POST', `/v4/ai/chat/stream/${tenantId}/helpdesk/chat`, { as: alice.email, body: { message: 'Still burning', conversation_id: name } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-conversation-id')).toBe(name);
    const events = (await stream.rest()).filter((m) => m.data !== '[DONE]').map(chatEvent);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { conversationId: name } });
    const [{ count }] = await sql<[{ count: number }]>`
      select count(*)::int as count from chat_messages m join users u on u.id = m.user_id
      where m.tenant_id = ${tenantId}::uuid and u.email = ${alice.email}
        and m.conversation_id = (select id from chat_conversations c where c.tenant_id = m.tenant_id and c.user_id = m.user_id and c.title = 'My printer is on fire' and c.workflow_key = 'helpdesk' and c.stage = 'chat')`;
    expect(count).toBe(4);
    const bobs = await chat('helpdesk/chat', { message: 'Mine too', conversation_id: name }, bob.email);
    expect(bobs.status).toBe(200);
    expect(bobs.body.conversation_id).toBe(name);
    const [{ conversations }] = await sql<[{ conversations: number }]>`
      select count(distinct (c.user_id, c.id))::int as conversations from chat_conversations c join users u on u.id = c.user_id
      where c.tenant_id = ${tenantId}::uuid and u.email in (${alice.email}, ${bob.email}) and c.stage = 'chat' and c.title in ('My printer is on fire', 'Mine too')`;
    expect(conversations).toBe(2);

    // v3 reaches the conversation by the same name, each user their own.
    const readByName = await stack.request('GET', `${V3}/chat/conversations/${name}`, { as: alice.email });
    expect(readByName.status, JSON.stringify(readByName.body)).toBe(200);
    expect(readByName.body.messages.map((m: any) => m.content).filter((_: string, i: number) => i % 2 === 0)).toEqual(['My printer is on fire', 'Still burning']);
    const listed = await stack.request('GET', `${V3}/chat/conversations`, { as: alice.email });
    expect(listed.body.data.map((c: any) => c.id)).toContain(readByName.body.id);
    expect((await stack.request('GET', `${V3}/chat/conversations/${readByName.body.id}`, { as: alice.email })).body).toEqual(readByName.body);
    expect((await stack.request('GET', `${V3}/chat/conversations/${name}`, { as: bob.email })).body.messages).toHaveLength(2);
    const continued = await openSse(stack, 'POST', `${V3}/chat`, { as: bob.email, body: { message: 'Any news?', conversationId: name } });
    expect(continued.status).toBe(200);
    expect((await continued.rest()).map(chatEvent).at(-1)).toMatchObject({ type: 'done' });
    expect((await stack.request('GET', `${V3}/chat/conversations/${name}`, { as: bob.email })).body.messages).toHaveLength(4);
    expect((await stack.request('DELETE', `${V3}/chat/conversations/${name}`, { as: bob.email })).status).toBe(204);
    expect((await stack.request('GET', `${V3}/chat/conversations/${name}`, { as: bob.email })).status).toBe(404);
    expect((await stack.request('GET', `${V3}/chat/conversations/${name}`, { as: alice.email })).body.messages).toHaveLength(4);

    // A name as long as v4 takes (200 characters) is one v3 takes too.
    const long = `long-${'x'.repeat(195)}`;
    expect((await chat('helpdesk/chat', { message: 'A long name', conversation_id: long })).body.conversation_id).toBe(long);
    const readLong = await stack.request('GET', `${V3}/chat/conversations/${long}`, { as: alice.email });
    expect(readLong.status, JSON.stringify(readLong.body)).toBe(200);
    expect(readLong.body.messages[0].content).toBe('A long name');
  });

  it("sends a remote profile's model, prompts and params to the OpenAI-compatible endpoint", async () => {
    const answered = await chat('hosted/triage', { message: 'Where is Apollo?', params: { customer: 'Globex', temperature: 0.3, max_tokens: 64 } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.answer).toBe(endpoint.answer);
    expect(answered.body.usage).toEqual({ promptTokens: 50, completionTokens: 10, totalTokens: 60 });
    const request = endpoint.received.at(-1)!;
    expect(request).toMatchObject({ model: 'gpt-test', temperature: 0.3, max_tokens: 64 });
    expect(request.messages[0]).toEqual({ role: 'system', content: 'Be exact.\n\nYou triage.\n\nTriage for Globex.' });
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: 'Where is Apollo?' });
  });

  it('answers 502 when the model fails, and streams an error event then data: [DONE]', async () => {
    const failed = await chat('hosted/triage', { message: 'Where is Apollo? [fail]' });
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe('BAD_GATEWAY');
    const stream = await openSse(stack, 'POST', `/v4/ai/chat/stream/${tenantId}/hosted/triage`, { as: alice.email, body: { message: 'Where is Apollo? [fail]' } });
    const messages = await stream.rest();
    expect(messages.at(-1)!.data).toBe('[DONE]');
    expect(chatEvent(messages.at(-2)!)).toMatchObject({ type: 'error', data: { code: 'BAD_GATEWAY' } });
  });

  it.each<[string, string, unknown, string, number, string?]>([
    ['an unknown workflow', 'nope/chat', { message: 'Hi' }, 'alice', 404],
    ['an unknown stage', 'helpdesk/billing', { message: 'Hi' }, 'alice', 404],
    ['a stage another workflow has', 'hosted/chat', { message: 'Hi' }, 'alice', 404],
    ['a workflow without an AI runtime binding', 'unbound/chat', { message: 'Hi' }, 'alice', 409],
    ['a draft workflow', 'paused/chat', { message: 'Hi' }, 'alice', 403],
    ['no message', 'helpdesk/chat', {}, 'alice', 400, 'message'],
    ['an empty conversation_id', 'helpdesk/chat', { message: 'Hi', conversation_id: '' }, 'alice', 400, 'conversation_id'],
    ['a temperature param above 1', 'helpdesk/chat', { message: 'Hi', params: { temperature: 3 } }, 'alice', 400, 'params.temperature'],
    ['the workflow in the body', 'helpdesk/chat', { message: 'Hi', workflowId: 'hosted' }, 'alice', 400, 'workflowId'],
    ['another tenant', 'helpdesk/chat', { message: 'Hi' }, 'globex', 403],
  ])('refuses %s, before any stream starts', async (_label, path, body, who, status, field) => {
    const as = who === 'globex' ? GLOBEX_ADMIN : alice.email;
    const answered = await chat(path, body, as);
    expect(answered.status, JSON.stringify(answered.body)).toBe(status);
    if (field) expect(answered.body.error.details.field).toBe(field);
    const streamed = await openSse(stack, 'POST', `/v4/ai/chat/stream/${tenantId}/${path}`, { as, body });
    expect(streamed.status).toBe(status);
    expect(streamed.json.error.code).toBe(answered.body.error.code);
  });

  it("answers the orchestrate ai_chat step through the same answering service (here: the endpoint's model)", async () => {
    const project = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: `Briefed ${slug}`, status: 'active', budget: 10 ** 9 } });
    expect(project.status).toBe(201);
    const executed = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, {
      as: ADMIN,
      body: { input: { status: 'active', question: 'Which project has the largest budget?' } },
    });
    expect(executed.status, JSON.stringify(executed.body)).toBe(200);
    expect(executed.body.output.answer).toBe(endpoint.answer);
    expect(executed.body.output.citations).toEqual([expect.objectContaining({ sourceType: 'resource', confidence: 1 })]);
    expect(endpoint.received.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'Which project has the largest budget?' });
  });
});
