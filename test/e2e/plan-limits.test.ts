import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { form, postForm, postOversizedForm } from '../harness/documents.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { chatEvent, openSse, type SseStream } from '../harness/sse-client.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { copyExampleWorkflows, createTenantWithUsers } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

/**
 * The limits of a tenant's plan, enforced through HTTP: concurrent executions, the `ai.chat`
 * capability and daily messages of orchestrate's `ai_chat` step, indexed fields per object type
 * and tenant, concurrent resumptions of chat answers, and the bytes a tenant stores. Each tenant
 * here is this file's own, so that one limit's counts do not spend another's.
 */
describe('plan limits', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const suffix = randomBytes(4).toString('hex');
  let endpoint: Awaited<ReturnType<typeof startScriptedEndpoint>>;
  let stack: TestStack;
  const tenants: Record<'runs' | 'steps' | 'types' | 'chat' | 'files' | 'race', { id: string; admin: DevUser }> = {} as never;

  beforeAll(async () => {
    endpoint = await startScriptedEndpoint();
    for (const name of ['runs', 'steps', 'types', 'chat', 'files', 'race'] as const) {
      const fixture = await createTenantWithUsers(sql, { slug: `limits-${name}-${suffix}`, plan: 'team', users: { admin: ['admin', 'tenant-admin'] } });
      tenants[name] = { id: fixture.tenantId, admin: fixture.users.admin! };
    }
    stack = await startTestStack({ devUsers: [...DEV_USERS, ...Object.values(tenants).map((t) => t.admin)], ai: endpoint.settings });
    await copyExampleWorkflows(sql, tenants.runs.id);
    await copyExampleWorkflows(sql, tenants.steps.id);
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    await endpoint?.close();
  });

  const override = (tenantId: string, capability: string, body: { allowed: boolean; limits?: Record<string, number>; reason: string }) =>
    stack.request('PUT', `/v4/platform/capabilities/overrides/${tenantId}/${capability}`, { as: PLATFORM_ADMIN, body });
  const executions = async (tenantId: string) =>
    (await sql<[{ count: number }]>`select count(*)::int as count from executions where tenant_id = ${tenantId}::uuid`)[0].count;

  it('refuses an execution beyond the plan’s concurrent executions with 429, and starts one again once a run ends', async () => {
    const { id, admin } = tenants.runs;
    expect((await override(id, 'workflows.runtime', { allowed: true, limits: { maxConcurrentExecutions: 1 }, reason: 'one at a time' })).status).toBe(200);
    const start = () =>
      stack.request('POST', `${V3}/orchestrate/workflows/project-intake/execute`, {
        as: admin.email,
        body: { input: { name: `Intake ${randomBytes(3).toString('hex')}`, budget: 10, reviewMs: 60_000 }, async: true },
      });
    const first = await start();
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const before = await executions(id);

    const refused = await start();
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    expect(refused.body.error.message).toContain('allows 1 concurrent executions');
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.retryAfter));
    expect(await executions(id)).toBe(before);

    expect((await stack.request('POST', `${V3}/orchestrate/executions/${first.body.id}/cancel`, { as: admin.email })).status).toBe(204);
    const again = await start();
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await stack.request('POST', `${V3}/orchestrate/executions/${again.body.id}/cancel`, { as: admin.email });
  }, 30_000);

  it('runs an ai_chat step only under the ai.chat capability: refused at the start without it', async () => {
    const { id, admin } = tenants.steps;
    expect((await override(id, 'ai.chat', { allowed: false, reason: 'no AI for this tenant' })).status).toBe(200);
    const refused = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: admin.email, body: { input: { question: 'Which project?' } } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toEqual({ code: 'FORBIDDEN', message: 'capability ai.chat is not available to this tenant: refused for this tenant by a platform administrator: no AI for this tenant' });
    expect(await executions(id)).toBe(0);
    // A workflow without an ai_chat step is not concerned.
    expect((await stack.request('POST', `${V3}/orchestrate/workflows/active-projects/execute`, { as: admin.email, body: {} })).status).toBe(200);
  });

  it('fails an execution whose ai_chat step comes after ai.chat was taken away, with the reason', async () => {
    const { id, admin } = tenants.steps;
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${id}/ai.chat`, { as: PLATFORM_ADMIN });
    await sql`
      insert into workflow_definitions (tenant_id, id, name, description, version, steps)
      values (${id}::uuid, 'wait-then-ask', 'Wait then ask', 'Waits, then asks the model.', '1',
        ${sql.json([
          { id: 'wait', name: 'Wait', type: 'delay', config: { ms: 2000 } },
          { id: 'ask', name: 'Ask', type: 'ai_chat', config: { prompt: 'Say hello' } },
        ])})`;
    const started = await stack.request('POST', `${V3}/orchestrate/workflows/wait-then-ask/execute`, { as: admin.email, body: { async: true } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await override(id, 'ai.chat', { allowed: false, reason: 'taken away' });
    const done = await until(
      () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: admin.email }),
      (r) => r.body.state !== 'running',
    );
    expect(done.body.state).toBe('failed');
    expect(done.body.error.message).toBe('capability ai.chat is not available to this tenant: refused for this tenant by a platform administrator: taken away');
    expect(done.body.steps.map((s: any) => [s.stepId, s.state])).toEqual([
      ['wait', 'completed'],
      ['ask', 'failed'],
    ]);
  }, 30_000);

  it('counts ai_chat steps against the daily chat messages: 429 at the start once they are spent', async () => {
    const { id, admin } = tenants.steps;
    await override(id, 'ai.chat', { allowed: true, limits: { maxMessagesPerDay: 1 }, reason: 'one message a day' });
    const ask = () => stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: admin.email, body: { input: { question: 'Which project?' } } });
    const first = await ask();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.state).toBe('completed');
    const [{ messages }] = await sql<[{ messages: number }]>`select messages from chat_daily_usage where tenant_id = ${id}::uuid and day = (now() at time zone 'UTC')::date`;
    expect(messages).toBe(1);
    const refused = await ask();
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    expect(refused.body.error.message).toContain('allows 1 chat messages a day');
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${id}/ai.chat`, { as: PLATFORM_ADMIN });
  }, 30_000);

  it('counts an ai_chat step retried after a failure once against the daily chat messages', async () => {
    const { id, admin } = tenants.steps;
    await override(id, 'ai.chat', { allowed: true, limits: { maxMessagesPerDay: 100 }, reason: 'a hundred messages a day' });
    const key = `retry-${randomBytes(3).toString('hex')}`;
    await sql`
      insert into workflow_definitions (tenant_id, id, name, description, version, steps)
      values (${id}::uuid, ${key}, 'Ask once', 'Asks the model; its first answer breaks off.', '1',
        ${sql.json([{ id: 'ask', name: 'Ask', type: 'ai_chat', config: { prompt: `[fail-once:${key}] Say hello` } }])})`;
    const today = async () =>
      (await sql<{ messages: number }[]>`select messages from chat_daily_usage where tenant_id = ${id}::uuid and day = (now() at time zone 'UTC')::date`)[0]?.messages ?? 0;
    const before = await today();
    const started = await stack.request('POST', `${V3}/orchestrate/workflows/${key}/execute`, { as: admin.email, body: { async: true } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const done = await until(
      () => stack.request('GET', `${V3}/orchestrate/executions/${started.body.id}`, { as: admin.email }),
      (r) => r.body.state !== 'running',
    );
    expect(done.body.state, JSON.stringify(done.body)).toBe('completed');
    // The step ran twice (the first answer broke off, the activity was retried) and was counted once.
    expect(endpoint.received.filter((r) => r.messages.some((m) => m.content.includes(`[fail-once:${key}]`)))).toHaveLength(2);
    expect(await today()).toBe(before + 1);
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${id}/ai.chat`, { as: PLATFORM_ADMIN });
  }, 30_000);

  describe('indexed fields of object types', () => {
    const indexedSchema = (count: number, prefix = 'f') => ({
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, { type: 'number', 'x-indexed': true }])),
    });
    const create = (name: string, schema: object, indexes: string[] = []) =>
      stack.request('POST', `/v4/data/resources/object-types?tenant_id=${tenants.types.id}`, { as: tenants.types.admin.email, body: { name, schema, indexes } });

    it('refuses a type asking for more than 20 indexed fields with 403 naming the limit, and creates nothing', async () => {
      const refused = await create('TooIndexed', indexedSchema(21));
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.error.code).toBe('FORBIDDEN');
      expect(refused.body.error.message).toContain('at most 20 indexed fields per object type');
      expect(refused.body.error.details).toEqual({ limit: 20, requested: 21 });
      const listed = await stack.request('GET', `/v4/data/resources/object-types?tenant_id=${tenants.types.id}`, { as: tenants.types.admin.email });
      expect(listed.body.data.map((t: any) => t.name)).not.toContain('TooIndexed');
      // `indexes` and x-indexed fields count once each.
      expect((await create('JustEnough', indexedSchema(20), ['f0', 'f1'])).status).toBe(201);
    });

    it('refuses indexed fields beyond 50 for the tenant, on create and on change', async () => {
      expect((await create('SecondIndexed', indexedSchema(20))).status).toBe(201);
      const refused = await create('ThirdIndexed', indexedSchema(11));
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.error.message).toContain('at most 50 indexed fields per tenant');
      expect(refused.body.error.details).toEqual({ limit: 50, requested: 51 });
      const third = await create('ThirdIndexed', indexedSchema(10));
      expect(third.status, JSON.stringify(third.body)).toBe(201);
      const grown = await stack.request('PATCH', `/v4/data/resources/object-types/${third.body.objectTypeId}?tenant_id=${tenants.types.id}`, {
        as: tenants.types.admin.email,
        body: { indexes: ['g0'], schema: { ...indexedSchema(10), properties: { ...indexedSchema(10).properties, g0: { type: 'number' } } } },
      });
      expect(grown.status, JSON.stringify(grown.body)).toBe(403);
      expect(grown.body.error.message).toContain('at most 50 indexed fields per tenant');
    });
  });

  describe('followers of a chat answer', () => {
    const chat = () => tenants.chat.admin.email;
    const eventsPath = (stream: SseStream) => `${V3}/chat/conversations/${stream.headers.get('x-conversation-id')}/messages/${stream.headers.get('x-message-id')}/events`;

    /** Asks a question whose answer the endpoint holds midway, and reads up to its first piece. */
    async function heldAnswer(key: string): Promise<SseStream> {
      const stream = await openSse(stack, 'POST', `${V3}/chat`, { as: chat(), body: { message: `Tell me about anything. [hold:${key}]` } });
      expect(stream.status).toBe(200);
      for (;;) {
        const next = await stream.next();
        if (!next || chatEvent(next).type === 'message') break;
      }
      await endpoint.held(key);
      return stream;
    }
    const resume = async (stream: SseStream) => {
      const follower = await openSse(stack, 'GET', eventsPath(stream), { as: chat() });
      if (follower.status === 200) await follower.next();
      return follower;
    };
    const expectRefused = (refused: SseStream, reason: string) => {
      expect(refused.status, JSON.stringify(refused.json)).toBe(429);
      expect(refused.json.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
      expect(refused.json.error.message).toContain(reason);
    };

    it('refuses resumptions beyond 3 per answer and 5 per user with 429, and takes one again once a follower leaves', async () => {
      const first = await heldAnswer('followers-a');
      const followers: SseStream[] = [];
      for (let i = 0; i < 3; i++) {
        const follower = await resume(first);
        expect(follower.status).toBe(200);
        followers.push(follower);
      }
      expectRefused(await resume(first), 'clients resuming this answer: at most 3 at a time');

      const second = await heldAnswer('followers-b');
      for (let i = 0; i < 2; i++) {
        const follower = await resume(second);
        expect(follower.status).toBe(200);
        followers.push(follower);
      }
      expectRefused(await resume(second), 'resumed answers: a user may follow at most 5 at a time');

      followers.pop()!.close();
      const again = await until(
        () => resume(second),
        (s) => s.status === 200,
      );
      endpoint.release('followers-a');
      endpoint.release('followers-b');
      expect((await again.rest()).map(chatEvent).at(-1)!.type).toBe('done');
      for (const follower of followers) expect((await follower.rest()).map(chatEvent).at(-1)!.type).toBe('done');
      first.close();
      second.close();
      // Once they ended, their followers no longer count: the answer can be replayed again.
      expect((await resume(first)).status).toBe(200);
    }, 30_000);
  });

  describe('storage quota', () => {
    const QUOTA = 300_000;
    const text = (bytes: number) => new Uint8Array(Buffer.alloc(bytes, 'quota text '));

    it('refuses uploads beyond the tenant’s stored bytes with 413, by declared length and while streaming, and stores nothing', async () => {
      const { id, admin } = tenants.files;
      expect((await override(id, 'storage.blob', { allowed: true, limits: { maxStoredBytes: QUOTA }, reason: 'small quota' })).status).toBe(200);
      const token = await stack.token(admin.email);
      const upload = (bytes: number) => postForm(stack, `${V3}/documents`, token, form([{ filename: 'notes.txt', bytes: text(bytes), type: 'text/plain' }]));

      const first = await upload(200_000);
      expect(first.status, JSON.stringify(first.body)).toBe(201);

      // The declared length alone is over what is left: refused before the body is read.
      const declared = await postOversizedForm(stack, `${V3}/documents`, token, 5 * 1024 * 1024);
      expect(declared.status, JSON.stringify(declared.body)).toBe(413);
      expect(declared.body.error.code).toBe('FILE_TOO_LARGE');
      expect(declared.body.error.message).toContain(`storage quota of ${QUOTA} bytes`);

      // Within what a form may declare, over the quota as it streams.
      const streamed = await upload(150_000);
      expect(streamed.status, JSON.stringify(streamed.body)).toBe(413);
      expect(streamed.body.error.message).toContain(`storage quota of ${QUOTA} bytes`);
      expect(streamed.body.error.details).toMatchObject({ quota: QUOTA });

      const listed = await stack.request('GET', `${V3}/documents?limit=50`, { as: admin.email });
      expect(listed.body.data).toHaveLength(1);

      // v4 file properties count against the same quota.
      const type = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${id}`, {
        as: admin.email,
        body: { name: 'Memo', schema: { type: 'object' }, fileProperties: { text: { maxSize: 1_000_000, contentTypes: ['text/plain'] } } },
      });
      expect(type.status, JSON.stringify(type.body)).toBe(201);
      const memo = (await stack.request('POST', `/v4/data/resources/${id}/${type.body.key}`, { as: admin.email, body: { data: {} } })).body;
      const file = await fetch(`${stack.url}/v4/data/resources/${id}/${type.body.key}/${memo.id}/files/text?filename=memo.txt`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: text(150_000),
      });
      expect(file.status).toBe(413);
      expect(((await file.json()) as any).error.message).toContain(`storage quota of ${QUOTA} bytes`);
      const unchanged = await stack.request('GET', `/v4/data/resources/${id}/${type.body.key}/${memo.id}`, { as: admin.email });
      expect(unchanged.body.version, JSON.stringify(unchanged.body)).toBe(1);

      // Removing a document frees its bytes.
      const stored = async () => Number((await sql<[{ bytes: string }]>`select bytes::text as bytes from tenant_storage_usage where tenant_id = ${id}::uuid`)[0].bytes);
      expect(await stored()).toBeGreaterThanOrEqual(200_000);
      expect((await stack.request('DELETE', `${V3}/documents/${first.body.id}`, { as: admin.email })).status).toBe(204);
      expect(await stored()).toBeLessThan(200_000);
      const last = await upload(150_000);
      expect(last.status, JSON.stringify(last.body)).toBe(201);
    }, 30_000);

    it('refuses the excess of uploads running at the same moment with 413: together they never pass the quota', async () => {
      const { id, admin } = tenants.race;
      const quota = 1_000_000;
      const fileBytes = 300_000;
      expect((await override(id, 'storage.blob', { allowed: true, limits: { maxStoredBytes: quota }, reason: 'small quota' })).status).toBe(200);
      const token = await stack.token(admin.email);
      // Six at once, each alone within the quota: 1.8 MB together, room for three.
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => postForm(stack, `${V3}/documents`, token, form([{ filename: `part-${i}.txt`, bytes: text(fileBytes), type: 'text/plain' }]))),
      );
      const stored = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status === 413);
      expect(stored.length + refused.length, JSON.stringify(answers.map((a) => a.body))).toBe(6);
      expect(stored.length).toBeGreaterThanOrEqual(1);
      expect(stored.length * fileBytes).toBeLessThanOrEqual(quota);
      for (const answer of refused) {
        expect(answer.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { quota } });
        expect(answer.body.error.message).toContain(`storage quota of ${quota} bytes`);
      }
      const [usage] = await sql<[{ bytes: string }]>`select bytes::text as bytes from tenant_storage_usage where tenant_id = ${id}::uuid`;
      expect(Number(usage.bytes)).toBeLessThanOrEqual(quota);
      const listed = await stack.request('GET', `${V3}/documents?limit=50`, { as: admin.email });
      expect(listed.body.data).toHaveLength(stored.length);
      // Nothing stays held once the uploads ended.
      const [held] = await sql<[{ count: number }]>`select count(*)::int as count from tenant_storage_reservations where tenant_id = ${id}::uuid`;
      expect(held.count).toBe(0);
    }, 30_000);
  });
});
