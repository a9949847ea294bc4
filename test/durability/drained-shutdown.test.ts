import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { startScriptedEndpoint } from '../harness/openai-compatible-endpoint.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { until } from '../harness/until.ts';

/**
 * SIGTERM to the platform's real process (`node --import tsx main.ts`, as the image runs it):
 * what is in flight finishes, what comes after is refused cleanly, event streams end with a final
 * resumable event, and a client that retries with its Idempotency-Key loses nothing across a restart.
 */

const GRACE_SECONDS = 10;
const DATA = '/v4/data/resources';

interface Platform {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

describe('drained shutdown of the platform process', () => {
  let stateDir: string;
  let port: number;
  let url: string;
  let token: string;
  const started: ChildProcess[] = [];

  let endpoint: Awaited<ReturnType<typeof startScriptedEndpoint>>;

  const startPlatform = async (): Promise<Platform> => {
    const child = spawn('node', ['--import', 'tsx', 'main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SVC_STATE_DIR: stateDir,
        // The run's operator key, which sealed the secrets (realtime signing keys) this process reads.
        SECRETS_KEY: devSecretsKey().toString('base64'),
        SVC_CACHE_DIR: join(stateDir, 'cache'),
        SVC_BLOB_DIR: join(stateDir, 'blobs'),
        KUBECONFIG: join(stateDir, 'no-kubeconfig'),
        DATABASE_URL: inject('databaseUrl'),
        TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: url,
        SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
        RATE_LIMIT_RESOURCES_PER_MINUTE: '100000',
        RATE_LIMIT_API_PER_MINUTE: '100000',
        // Chat answers from an OpenAI-compatible endpoint the test steers (test/harness/openai-compatible-endpoint.ts).
        AI_BASE_URL: endpoint.settings.baseUrl,
        AI_API_KEY: endpoint.settings.apiKey,
        AI_MODEL: endpoint.settings.model,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    await until(async () => output.includes('platform ready on') || child.exitCode !== null, (ready) => ready, 90_000);
    if (child.exitCode !== null) throw new Error(`the platform exited before it was ready: ${output}`);
    return { child, output: () => output, exited };
  };

  /** A request on a connection of its own (never a kept-alive one): its status, or the socket error's code. */
  const freshRequest = (path: string) =>
    new Promise<number | string>((resolve) => {
      const req = httpRequest(`${url}${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end();
    });

  beforeAll(async () => {
    endpoint = await startScriptedEndpoint();
    stateDir = await mkdtemp(join(tmpdir(), 'svc-drain-'));
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
  });
  afterEach(async () => {
    for (const child of started.filter((c) => c.exitCode === null && c.signalCode === null)) {
      killProcessGroup(child);
      await once(child, 'exit');
    }
  });
  afterAll(async () => {
    for (const child of started) killProcessGroup(child);
    await endpoint?.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('finishes an upload in flight, refuses later requests cleanly, ends an event stream with a final resumable event, then exits', async () => {
    const platform = await startPlatform();
    token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
    const auth = { authorization: `Bearer ${token}` };
    const json = async (path: string, body: unknown) => {
      const response = await fetch(url + path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const parsed = (await response.json()) as any;
      expect(response.status, JSON.stringify(parsed)).toBeLessThan(300);
      return parsed;
    };
    const tenants = (await (await fetch(`${url}/v4/identity/tenants`, { headers: auth })).json()) as { data: Array<{ id: string; slug: string }> };
    const acme = tenants.data.find((t) => t.slug === 'acme')!.id;
    const type = await json(`${DATA}/object-types?tenant_id=${acme}`, {
      name: `Drain${randomBytes(3).toString('hex')}`,
      schema: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: false },
      fileProperties: { notes: { maxSize: 8 * 1024 * 1024, contentTypes: ['text/plain'] } },
    });
    const resource = await json(`${DATA}/${acme}/${type.key}`, { data: { title: 'drained' } });

    // An event stream open when SIGTERM comes.
    const negotiated = await json('/v4/realtime/negotiate', { tenant_id: acme, channels: ['resources'] });
    const stream = await fetch(negotiated.url.replace(/^https?:\/\/[^/]+/, url));
    expect(stream.status).toBe(200);
    let streamText = '';
    const streamEnded = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body!) streamText += decoder.decode(chunk, { stream: true });
    })();

    // 3 MB of text over 3 s; SIGTERM 1 s in.
    const chunks = 30;
    const line = 'drained shutdowns let this upload finish\n';
    const chunk = line.repeat(Math.ceil(100_000 / line.length)).slice(0, 100_000);
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < chunks; i++) {
          controller.enqueue(new TextEncoder().encode(chunk));
          await sleep(100);
        }
        controller.close();
      },
    });
    const upload = fetch(`${url}${DATA}/${acme}/${type.key}/${resource.id}/files/notes?filename=notes.txt`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(chunks * chunk.length) },
      body,
      duplex: 'half',
    });
    await sleep(1_000);
    platform.child.kill('SIGTERM');
    await sleep(300);

    // After SIGTERM: a new connection is refused (nothing listens), never accepted and cut.
    expect(await freshRequest('/api/svc/v3/users/me')).toBe('ECONNREFUSED');
    // The stream ended with a retryable error the client resumes from (a new negotiation and Last-Event-ID).
    await streamEnded;
    expect(streamText).toMatch(/retry: 1000\nevent: error\ndata: \{"error":\{"code":"SERVICE_UNAVAILABLE","message":"the server is shutting down[^"]*","retryAfter":1\}\}\n\n$/);

    const uploaded = await upload;
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    const exitCode = await platform.exited;
    expect(exitCode).toBe(0);
    expect(platform.output()).not.toMatch(/server error|Error:/);
  }, 180_000);

  it('loses no write across a restart under load when clients retry with their Idempotency-Key', async () => {
    let platform = await startPlatform();
    token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
    const auth = () => ({ authorization: `Bearer ${token}` });
    const tenants = (await (await fetch(`${url}/v4/identity/tenants`, { headers: auth() })).json()) as { data: Array<{ id: string; slug: string }> };
    const acme = tenants.data.find((t) => t.slug === 'acme')!.id;
    const run = randomUUID();

    // This process's built-in identity provider signs with keys of its own: after the restart the
    // client signs in again (with an external provider, its token would stay valid).
    let signIn: Promise<string> | undefined;
    const freshToken = (stale: string) => {
      if (token !== stale) return Promise.resolve(token);
      signIn ??= loginWithPkce({ issuer: url, email: 'admin@acme.test' }).then((t) => (token = t.accessToken)).finally(() => (signIn = undefined));
      return signIn;
    };

    /** Writes one resource, retrying (same key, same body) on a refusal or a lost connection, as a careful client does. */
    const writeWithRetries = async (n: number) => {
      const key = randomUUID();
      const body = JSON.stringify({ data: { name: `restart ${run} ${n}` } });
      const deadline = Date.now() + 90_000;
      for (let attempt = 1; Date.now() < deadline; attempt++) {
        const bearer = token;
        const response = await fetch(`${url}${DATA}/${acme}/project`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': key }, body }).catch(
          () => undefined, // connection refused or reset: the edge is restarting
        );
        if (response?.status === 201) return { n, id: ((await response.json()) as { id: string }).id, attempts: attempt };
        if (response?.status === 401) await freshToken(bearer).catch(() => undefined);
        else if (response) expect({ status: response.status, retryAfter: response.headers.get('retry-after') }, await response.text()).toEqual({ status: 503, retryAfter: '1' });
        await sleep(100);
      }
      throw new Error(`write ${n} never succeeded`);
    };

    let writing = true;
    const clients = Array.from({ length: 4 }, async (_, client) => {
      const done: Array<{ n: number; id: string; attempts: number }> = [];
      for (let i = 0; writing; i++) done.push(await writeWithRetries(client * 10_000 + i));
      return done;
    });
    await sleep(1_500);
    platform.child.kill('SIGTERM');
    expect(await platform.exited).toBe(0);
    platform = await startPlatform();
    await sleep(1_500);
    writing = false;
    const written = (await Promise.all(clients)).flat();

    expect(written.some((w) => w.attempts > 1)).toBe(true);
    const ids = new Set<string>();
    for (const w of written) {
      const stored = await fetch(`${url}${DATA}/${acme}/project/${w.id}`, { headers: auth() });
      expect(stored.status).toBe(200);
      ids.add(w.id);
    }
    expect(ids.size).toBe(written.length);
    // A retried write is stored once, whichever attempt's answer was lost.
    for (const w of written.filter((x) => x.attempts > 1)) {
      const found = await fetch(`${url}/api/svc/v3/resources?type=project&filter[name]=${encodeURIComponent(`restart ${run} ${w.n}`)}`, { headers: auth() });
      expect(((await found.json()) as { total: number }).total).toBe(1);
    }
    platform.child.kill('SIGTERM');
    expect(await platform.exited).toBe(0);
  }, 240_000);

  /** Asks a chat question on the v3 API; resolves with its answer's ids and the stream's text so far (and in `ended`, all of it). */
  const ask = async (auth: Record<string, string>, message: string) => {
    const response = await fetch(`${url}/api/svc/v3/chat`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ message }) });
    expect(response.status, response.status === 200 ? '' : await response.text()).toBe(200);
    const answer = { conversationId: response.headers.get('x-conversation-id')!, messageId: response.headers.get('x-message-id')!, text: '', ended: Promise.resolve() };
    answer.ended = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of response.body!) answer.text += decoder.decode(chunk, { stream: true });
    })().catch(() => {});
    return answer;
  };

  it('ends a chat stream in flight at SIGTERM with a resumable event, finishes its answer and stores it, then exits', async () => {
    let platform = await startPlatform();
    token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
    const chat = await ask({ authorization: `Bearer ${token}` }, 'What is the budget of Apollo? [hold:drain-chat]');
    await endpoint.held('drain-chat');
    const stoppedAt = Date.now();
    platform.child.kill('SIGTERM');

    // The stream ends at once with `retry` and an error event without an id: the client resumes from its last event id.
    await chat.ended;
    expect(chat.text).toMatch(/retry: 1000\n(event: error\n)?data: \{[^\n]*"code":"SERVICE_UNAVAILABLE"[^\n]*\}\n\n$/);
    const lastId = Number([...chat.text.matchAll(/^id: (\d+)$/gm)].at(-1)?.[1]);
    expect(lastId).toBeGreaterThan(0);
    // The model goes on answering after the stream was handed back; the process waits for it.
    await sleep(1_000);
    endpoint.release('drain-chat');
    expect(await platform.exited).toBe(0);
    process.stderr.write(`[drained-shutdown] a chat answer in flight at SIGTERM, finished 1 s after: exited ${Date.now() - stoppedAt} ms after SIGTERM\n`);
    expect(Date.now() - stoppedAt).toBeLessThan((GRACE_SECONDS + 5) * 1_000);
    expect(platform.output()).not.toMatch(/server error|Error:/);

    // Another process (here the restarted one) has the whole answer stored, and the resumed stream ends with `done`.
    platform = await startPlatform();
    token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
    const auth = { authorization: `Bearer ${token}` };
    const conversation = (await (await fetch(`${url}/api/svc/v3/chat/conversations/${chat.conversationId}`, { headers: auth })).json()) as { messages: Array<{ id: string; status: string; content: string }> };
    expect(conversation.messages.find((m) => m.id === chat.messageId)).toMatchObject({ status: 'complete', content: endpoint.answer });
    const resumed = await fetch(`${url}/api/svc/v3/chat/conversations/${chat.conversationId}/messages/${chat.messageId}/events`, { headers: { ...auth, 'last-event-id': String(lastId) } });
    expect(resumed.status).toBe(200);
    const rest = [...(await resumed.text()).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { type: string; data: { delta?: string } });
    expect(rest.at(-1)?.type).toBe('done');
    // What the client read before the stop and what the resumed stream gives make the whole answer once
    // (how much of it reached the client before SIGTERM depends on the machine's speed).
    const deltas = (events: Array<{ type: string; data: { delta?: string } }>) => events.filter((e) => e.type === 'message').map((e) => e.data.delta).join('');
    const read = [...chat.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { type: string; data: { delta?: string } });
    expect(deltas(read) + deltas(rest)).toBe(endpoint.answer);
    platform.child.kill('SIGTERM');
    expect(await platform.exited).toBe(0);
  }, 180_000);

  it('exits within one grace when a request in flight and a chat answer each take longer than it', async () => {
    const platform = await startPlatform();
    token = (await loginWithPkce({ issuer: url, email: 'admin@acme.test' })).accessToken;
    const auth = { authorization: `Bearer ${token}` };
    // A chat answer the model does not finish before the process is gone.
    const chat = await ask(auth, 'What is the budget of Apollo? [hold:drain-late]');
    await endpoint.held('drain-late');
    // An upload whose client sends its body over 3 grace periods.
    const tenants = (await (await fetch(`${url}/v4/identity/tenants`, { headers: auth })).json()) as { data: Array<{ id: string; slug: string }> };
    const acme = tenants.data.find((t) => t.slug === 'acme')!.id;
    const created = async (path: string, body: unknown) => (await (await fetch(url + path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
    const type = await created(`${DATA}/object-types?tenant_id=${acme}`, {
      name: `Late${randomBytes(3).toString('hex')}`,
      schema: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: false },
      fileProperties: { notes: { maxSize: 8 * 1024 * 1024, contentTypes: ['text/plain'] } },
    });
    const resource = await created(`${DATA}/${acme}/${type.key}`, { data: { title: 'late' } });
    const seconds = GRACE_SECONDS * 3;
    let sending = true;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < seconds && sending; i++) {
          controller.enqueue(new TextEncoder().encode('a slow line\n'));
          await sleep(1_000);
        }
        controller.close();
      },
    });
    const upload = fetch(`${url}${DATA}/${acme}/${type.key}/${resource.id}/files/notes?filename=late.txt`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(seconds * 12) },
      body,
      duplex: 'half',
    }).catch((error: Error) => error);
    await sleep(1_000);

    const stoppedAt = Date.now();
    platform.child.kill('SIGTERM');
    await platform.exited;
    const stoppedMs = Date.now() - stoppedAt;
    sending = false;
    await Promise.all([upload, chat.ended]);
    endpoint.release('drain-late');
    process.stderr.write(`[drained-shutdown] an upload and a chat answer each longer than the ${GRACE_SECONDS} s grace: exited ${stoppedMs} ms after SIGTERM\n`);
    // The requests in flight and the chat answers share the one grace: the pod's termination grace (grace + 10 s with the chart's preStop) holds.
    expect(stoppedMs).toBeLessThan((GRACE_SECONDS + 4) * 1_000);
  }, 180_000);
});
