import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { createTenantWithUsers } from '../harness/tenant-fixture.ts';
import { spawnSvc, svc } from './svc.ts';

/**
 * `svc chat send|stream` and `svc verify calls --include-chat` against the running platform. The
 * tenant's workflow is configured as v4 chat reads it (`shared-workflow-config`,
 * `shared-chatbot-config`, `shared-ai-profile`); its AI profile names a remote provider, which the
 * platform reaches as an OpenAI-compatible endpoint: a local server speaking that wire format
 * (test/harness/openai-compatible-endpoint.ts) that answers in pieces and can hold an answer
 * midway, so that the test sees the client print a piece before the rest exists.
 */
describe('svc chat', { timeout: 120_000 }, () => {
  const slug = `clichat-${randomBytes(4).toString('hex')}`;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let endpoint: Awaited<ReturnType<typeof startScriptedEndpoint>>;
  let stack: TestStack;
  let home: string;
  let tenantId: string;
  let alice: DevUser;
  let env: Record<string, string>;

  beforeAll(async () => {
    endpoint = await startScriptedEndpoint();
    const fixture = await createTenantWithUsers(sql, { slug, plan: 'team', users: { alice: ['admin'] } });
    tenantId = fixture.tenantId;
    alice = fixture.users.alice!;
    stack = await startTestStack({ devUsers: [...DEV_USERS, alice], ai: endpoint.settings });
    const create = async (type: string, data: object) => {
      const response = await stack.request('POST', `/v4/data/resources/${tenantId}/${type}`, { as: alice.email, body: { data } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
    };
    await create('shared-workflow-config', { workflowKey: 'assistant', status: 'active', stages: [{ id: 'chat' }, { id: 'triage', prompt: 'Triage for {{customer}}.' }], aiProfileKey: 'hosted' });
    await create('shared-ai-profile', { profileKey: 'hosted', provider: 'openai', model: 'gpt-test', systemPrompt: 'Be exact.' });
    await create('shared-chatbot-config', { workflowKey: 'assistant', status: 'active', systemPrompt: 'You assist.' });
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
    // The tenant comes from the environment, as after `svc tenant select`.
    env = { HOME: home, SVC_TOKEN: await stack.token(alice.email), BASE_URL_PUBLIC_API: stack.url, SVC_TENANT_ID: tenantId };
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    await endpoint?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('sends a message to the chat stage by default, in a new conversation named by a generated UUID, and prints the answer', async () => {
    const sent = await svc(['chat', 'send', 'Where is Apollo?', '--workflow', 'assistant', '--format', 'json'], env);
    expect(sent.exitCode, sent.stdout + sent.stderr).toBe(0);
    expect(sent.json).toMatchObject({ answer: endpoint.answer, workflowId: 'assistant', stage: 'chat', conversationId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(sent.stderr).toContain(`conversation ${sent.json.conversationId}`);
    const request = endpoint.received.at(-1)!;
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: 'Where is Apollo?' });

    const text = await svc(['chat', 'send', 'Where is Apollo?', '--workflow', 'assistant'], env);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe(`${endpoint.answer}\n`);
    expect(text.stderr).toMatch(/^conversation [0-9a-f-]{36} \(continue it with --conversation-id [0-9a-f-]{36}\)\n$/);
  });

  it('continues the conversation given, and sends --stage and --param values to the stage prompt and the model', async () => {
    const conversationId = randomUUID();
    for (const message of ['My printer is on fire', 'Still burning']) {
      const sent = await svc(
        ['chat', 'send', message, '--workflow', 'assistant', '--stage', 'triage', '--conversation-id', conversationId, '--param', 'customer=Globex', '--param', 'temperature=0.3', '--param', 'max_tokens=64', '--format', 'json'],
        env,
      );
      expect(sent.exitCode, sent.stdout + sent.stderr).toBe(0);
      expect(sent.json).toMatchObject({ conversationId, stage: 'triage' });
    }
    const request = endpoint.received.at(-1)!;
    expect(request).toMatchObject({ model: 'gpt-test', temperature: 0.3, max_tokens: 64 });
    expect(request.messages[0]!.content).toContain('Triage for Globex.');
    const stored = await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice.email });
    expect(stored.body.messages.map((m: any) => [m.role, m.content.slice(0, 13)])).toEqual([
      ['user', 'My printer is'],
      ['assistant', 'Apollo has a '],
      ['user', 'Still burning'],
      ['assistant', 'Apollo has a '],
    ]);
  });

  it('continues a conversation named by any name of 1-200 characters, as v4 accepts', async () => {
    const hex = randomBytes(3).toString('hex');
    const name = `O'Brien's ticket / ${hex}`;
    for (const [verb, message] of [['send', 'My printer is on fire'], ['stream', 'Still burning']] as const) {
      const sent = await svc(['chat', verb, message, '--workflow', 'assistant', '--conversation-id', name, '--format', 'json'], env);
      expect(sent.exitCode, sent.stdout + sent.stderr).toBe(0);
      // The hint quotes the name as a shell takes it back.
      expect(sent.stderr, verb).toContain(`(continue it with --conversation-id 'O'\\''Brien'\\''s ticket / ${hex}')`);
    }
    const stored = await stack.request('GET', `${V3}/chat/conversations/${encodeURIComponent(name)}`, { as: alice.email });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('streams the answer, printing each piece as it arrives, and ends at data: [DONE]', async () => {
    const child = spawnSvc(['chat', 'stream', 'Where is Apollo? [hold:cli-stream]', '--workflow', 'assistant'], env);
    let stdout = '';
    const firstPiece = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        resolve();
      }),
    );
    await endpoint.held('cli-stream');
    await firstPiece;
    // The model has sent its first piece and waits: the client has printed it already.
    expect(stdout).toBe('Apollo has ');
    endpoint.release('cli-stream');
    const done = await child;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(stdout).toBe(`${endpoint.answer}\n`);
    expect(done.stderr).toMatch(/^conversation [0-9a-f-]{36} /);
  });

  it('streams to the stage --stage names, with the --param values in its prompt', async () => {
    const streamed = await svc(['chat', 'stream', 'The toaster sparks', '--workflow', 'assistant', '--stage', 'triage', '--param', 'customer=Initech', '--format', 'json'], env);
    expect(streamed.exitCode, streamed.stderr).toBe(0);
    const events = streamed.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(events.filter((e) => e.type === 'message').map((e) => e.data.delta).join('')).toBe(endpoint.answer);
    const request = endpoint.received.at(-1)!;
    expect(request.messages[0]!.content).toContain('Triage for Initech.');
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: 'The toaster sparks' });
  });

  it('streams the events as JSON lines with --format json, continuing the conversation given', async () => {
    const conversationId = randomUUID();
    const streamed = await svc(['chat', 'stream', 'Where is Apollo?', '--workflow', 'assistant', '--conversation-id', conversationId, '--format', 'json'], env);
    expect(streamed.exitCode, streamed.stderr).toBe(0);
    const events = streamed.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(events.filter((e) => e.type === 'message').map((e) => e.data.delta).join('')).toBe(endpoint.answer);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { conversationId } });
    expect((await stack.request('GET', `${V3}/chat/conversations/${conversationId}`, { as: alice.email })).body.messages).toHaveLength(2);
  });

  it('fails with E203 when the model fails, after printing what came; E202 for a workflow the tenant does not have', async () => {
    const broken = await svc(['chat', 'stream', 'Where is Apollo? [fail]', '--workflow', 'assistant'], env);
    expect(broken.exitCode).toBe(1);
    expect(broken.stdout).toMatch(/^Apollo has /);
    expect(broken.stderr).toContain('Error E203');
    const brokenSend = await svc(['chat', 'send', 'Where is Apollo? [fail]', '--workflow', 'assistant', '--format', 'json'], env);
    expect(brokenSend.json.error).toMatchObject({ code: 'E203', exitCode: 1 });

    for (const verb of ['send', 'stream']) {
      const unknown = await svc(['chat', verb, 'Hello', '--workflow', 'no-such-workflow', '--format', 'json'], env);
      expect(unknown.exitCode, verb).toBe(5);
      expect(unknown.json.error, verb).toMatchObject({ code: 'E202' });
    }
  });

  it('refuses bad input before any call: no --workflow, an empty conversation name or one over 200 characters, a --param without =', async () => {
    const offline = { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' };
    const noWorkflow = await svc(['chat', 'send', 'Hello', '--format', 'json'], offline);
    expect(noWorkflow.json.error).toMatchObject({ code: 'E303', message: 'Required field missing: --workflow', exitCode: 2 });
    for (const badId of ['', 'x'.repeat(201)]) {
      const refused = await svc(['chat', 'stream', 'Hello', '--workflow', 'assistant', '--conversation-id', badId, '--format', 'json'], offline);
      expect(refused.json.error).toMatchObject({ code: 'E305', exitCode: 2, message: expect.stringContaining('--conversation-id must be 1-200 characters') });
    }
    const badParam = await svc(['chat', 'send', 'Hello', '--workflow', 'assistant', '--param', 'customer', '--format', 'json'], offline);
    expect(badParam.json.error).toMatchObject({ code: 'E305', exitCode: 2 });
  });

  it('verify calls --include-chat checks the chat stage unless --stage names another', async () => {
    const verified = await svc(['verify', 'calls', '--include-chat', '--workflow', 'assistant', '--format', 'json'], env);
    expect(verified.json.checks.find((c: any) => c.name === 'chat'), verified.stdout + verified.stderr).toMatchObject({ ok: true, detail: expect.stringMatching(/^answered \d+ characters/) });
    // The message defaults to "Hello"; --chat-message sends another.
    expect(endpoint.received.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'Hello' });
    const told = await svc(['verify', 'calls', '--include-chat', '--workflow', 'assistant', '--chat-message', 'Are you there?', '--format', 'json'], env);
    expect(told.json.checks.find((c: any) => c.name === 'chat'), told.stdout + told.stderr).toMatchObject({ ok: true });
    expect(endpoint.received.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'Are you there?' });
    const missing = await svc(['verify', 'calls', '--include-chat', '--workflow', 'assistant', '--stage', 'no-such-stage', '--format', 'json'], env);
    expect(missing.json.checks.find((c: any) => c.name === 'chat')).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^E(202|302|305)$/) } });
    expect(missing.exitCode).toBe(9);
  });
});
